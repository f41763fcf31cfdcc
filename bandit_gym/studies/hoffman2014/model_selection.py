"""hoffman2014 §6, study (b): model selection on scikit-learn's diabetes data (``ModelSelection-v0``), played with
the arms pulled at each round recorded, and its table ``model_selection.md``. ``reproduce.py`` runs it and draws
Figures 3 and 4."""

from __future__ import annotations

from typing import Any

import numpy as np

from bandit_gym.studies.hoffman2014.traffic import BAYESIAN

MODEL_SELECTION_ENV = "ModelSelection-v0"
MODEL_SELECTION_BUDGETS = (10, 40)
ALLOCATION_AGENTS = ("BayesGap", "EI")
"""The agents whose pulls Figure 4 shows."""


# ------------------------------------------------------------------------------------------- model selection
def play_recorded(agent: Any, runs: int, budget: int, seed: int) -> dict[str, np.ndarray]:
    """``runs`` episodes of ``ModelSelection-v0`` at once (a vector env), recording the arm pulled at every
    round ``(runs, T)`` and the final recommendation ``(runs,)``."""
    import gymnasium as gym

    venv = gym.make_vec(MODEL_SELECTION_ENV, num_envs=runs, vectorization_mode="vector_entry_point", budget=budget,
                        common_random_numbers=True, copy=False)
    obs, _ = venv.reset(seed=seed)
    agent.reset(seed=seed + 1)
    pulls = np.zeros((runs, budget), dtype=np.int64)
    for t in range(budget + 1):
        action = agent.act(obs)
        if t < budget:
            pulls[:, t] = action[:, 0]
        else:
            answer = action[:, 1:].argmax(axis=1)
        obs, *_ = venv.step(action)
    venv.close()
    return {"pulls": pulls, "answer": answer}


def model_selection_runs(runs: int, seed: int = 2014) -> tuple[Any, Any]:
    r"""Every Bayesian agent at \(T = 10\) and 40, each with the ORACLE prior of ``empirical_bayes_model`` (fitted to
    the reward table, whose means are the truth): one row per run (recommended model, its true RMSE) and one row
    per run and round (the model trained)."""
    import pandas as pd

    from bandit_gym.agents import AGENTS
    from bandit_gym.envs.model_selection import empirical_bayes_model
    from bandit_gym.model_selection import MODELS, load_table

    rmse = -load_table().mean(axis=1)
    model = empirical_bayes_model()
    records, allocations = [], []
    for budget in MODEL_SELECTION_BUDGETS:
        for name, label in BAYESIAN:
            played = play_recorded(AGENTS[name](**model), runs, budget, seed)
            answer = played["answer"]
            records.append(pd.DataFrame({"agent": label, "budget": budget, "run": np.arange(runs), "arm": answer,
                                         "model": [MODELS[a].label for a in answer], "rmse": rmse[answer],
                                         "regret": rmse[answer] - rmse.min()}))
            run, rnd = np.indices(played["pulls"].shape)
            allocations.append(pd.DataFrame({"agent": label, "budget": budget, "run": run.ravel(),
                                             "round": rnd.ravel() + 1, "arm": played["pulls"].ravel()}))
    return pd.concat(records, ignore_index=True), pd.concat(allocations, ignore_index=True)


def model_selection_markdown(records: Any) -> str:
    """``model_selection.md``: the true RMSE of each agent's recommended model per budget (mean, standard error,
    median, how often it is the best model), from the per-run records of the model-selection study."""
    from bandit_gym.model_selection import MODELS, load_table

    rmse = -load_table().mean(axis=1)
    best = int(np.argmin(rmse))
    table = records.groupby(["budget", "agent"], sort=False).agg(
        mean=("rmse", "mean"), se=("rmse", lambda x: x.std(ddof=1) / np.sqrt(len(x))), median=("rmse", "median"),
        best=("arm", lambda x: float(np.mean(x == best))), runs=("rmse", "size"))
    lines = [f"True RMSE (table mean) of the recommended model on the diabetes data; the best model is "
             f"{MODELS[best].label} (RMSE {rmse[best]:.2f}), the median model {np.median(rmse):.2f}, the worst "
             f"{rmse.max():.2f}.", "",
             "Every agent has an ORACLE prior: its prior mean, eta and sigma are fitted to the reward table "
             "(`bandit_gym.envs.model_selection.empirical_bayes_model`), whose means are the truth the runs are "
             "scored against (the paper gives no model). A learner would have to estimate them from its own pulls.",
             "",
             "| T | agent | mean RMSE (SE) | median | P(best model) | runs |", "|---|---|---|---|---|---|"]
    for (budget, agent), row in table.iterrows():
        lines.append(f"| {budget} | {agent} | {row['mean']:.2f} ({row['se']:.2f}) | {row['median']:.2f} | "
                     f"{row['best']:.2f} | {int(row['runs'])} |")
    return "\n".join([*lines, ""])
