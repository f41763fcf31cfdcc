"""A trained stable-baselines3 policy as an agent, so that it plays in the experiment engine like LSA or DKWUCB."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from bandit_gym import _validation as check
from bandit_gym.agents.base import Agent, Obs, writes_answer
from bandit_gym.families import Family, contract, family_of
from bandit_gym.rl.saved import ALGORITHMS


class SB3Agent(Agent):
    r"""A trained stable-baselines3 model (``model.predict``) behind the agent protocol.

    Not from the papers: the adapter that puts an RL policy next to the papers' agents, as a row of the same results
    tables and figures (``{name = "SB3Agent", params = {policy = "runs/ppo"}, label = "PPO"}`` in a spec).

    ``policy`` is one of

    - a folder written by ``bandit_gym.rl.TrainedPolicy.save`` (``model.zip``, ``metadata.json`` naming the SB3 class,
      and the observation statistics ``vecnormalize.npz`` if the model was trained on normalised observations);
    - the path of an SB3 ``.zip`` (``model.save(...)``), loaded with the SB3 class ``algo`` (default ``"PPO"``); its
      normalisation statistics are ``normalize`` (a ``VecNormalize``, or the path of an ``.npz`` written by
      ``bandit_gym.rl.save_normalize``), or the ``vecnormalize.npz`` beside it when there is one;
    - a ``TrainedPolicy``, or an SB3 model or policy (then ``normalize`` may give its ``VecNormalize``).

    ``algo`` names the SB3 class of a saved model (a folder's ``metadata.json`` names it already). A path is read at the
    first ``act``, in the process that plays (a spec holding a path pickles cheaply to workers).

    Files are read without unpickling by default (``bandit_gym.rl.load_model``): SB3 stores the settings of a model that
    are not plain JSON (its spaces, policy class, schedules) as pickles in the ``.zip``, and these are rebuilt from the
    readable text SB3 writes beside them (a file holding another pickled setting is refused); the weights are read with
    torch's ``weights_only=True``; the statistics come from ``vecnormalize.npz``. ``trust_pickles=True`` reads the files
    as SB3 does, unpickling them, which runs any code they hold: pass it only for files you trust, e.g. a folder saved
    before ``vecnormalize.npz`` existed (or a ``vecnormalize.pkl`` of ``VecNormalize.save``, given as ``normalize`` or
    lying beside a ``.zip``; without the opt-in such a file is a ValueError, never read and never skipped silently).

    Each step: normalise the observation with the training statistics (SB3's ``VecNormalize.normalize_obs``, not
    updated), then ``model.predict(obs, deterministic)`` on the whole batch at once. A policy trained through
    ``EmpiricalAnswer`` (``Discrete`` action on a pure-exploration env) chooses only the arm (or \(K\), stop); the
    answer bits are the env's empirical rule (thresholding: \(\mathbb{1}\{\hat\theta_i \ge \theta\}\); best arm and top
    \(K\): the \(m\) largest empirical means among pulled arms). Not anytime: a policy reads the budget left.

    ``deterministic=None`` (the default) samples the action on pure-exploration envs and plays the most likely one on
    the threshold bandit. A pure-exploration policy is trained on many instances, where its most likely arm at a given
    state hardly depends on the rewards seen: played greedily it pulls nearly always the same few arms and never learns
    the others' means (``docs/rl-reference.md``: PPO on tao2019 Setup 1 answers 5 arms wrong in every run, aggregate
    regret 5 against 1.57 sampled), while sampling explores as in training. On the threshold bandit the greedy action is
    the policy's best guess of the arm that wins at \(c_t\), and sampling only adds regret (38.7 against 46.4 over 1000
    rounds). ``True`` or ``False`` force one way; sampling uses torch's global generator, which ``reset`` seeds
    (``torch.manual_seed``). A DQN has no distribution to sample: SB3's non-deterministic ``predict`` is
    \(\epsilon\)-greedy at its final exploration rate (0.05 by default), so a DQN policy stays nearly greedy either way.

    Refusals (ValueError, at the first ``act``): a file that is not an SB3 ``.zip``, or that another SB3 class than
    ``algo`` saved; a policy trained on other observations (another env or \(K\): the shapes of its observation space)
    or another action space, and a policy trained on another budget (the upper bound of ``budget_left`` in its
    observation space, \(T\) for the env it was trained on) than the budget of the episodes it plays, since the budget
    left is part of what it reads and the normalisation statistics were gathered at that budget; ``any_budget=True``
    plays it at other budgets anyway (a generalisation study).

    Readings: none to list, since no paper defines this agent; every choice above (the empirical answer bits, frozen
    normalisation statistics, sampling on pure-exploration envs) is ours.

    Examples:
        A policy trained briefly with ``bandit_gym.rl.train``, played for one episode:

        >>> import gymnasium as gym
        >>> from bandit_gym.rl import SB3Agent
        >>> from bandit_gym.rl import train
        >>> from bandit_gym.rollout import play_episode
        >>> policy = train("ThresholdBandit-v0", total_timesteps=256, seed=0, num_envs=2, env_kwargs={"horizon": 50})
        >>> agent = SB3Agent(policy.model, normalize=policy.normalize)
        >>> play_episode(gym.make("ThresholdBandit-v0", horizon=50), agent, seed=0)["pulls"]
        50
    """

    reads_every_value: ClassVar[bool] = True

    families: ClassVar[tuple[str, ...]] = ("thresholding", "threshold", "best_arm", "top_k", "multi_armed")
    anytime: ClassVar[bool] = False

    def __init__(self, policy: Any, algo: str | None = None, normalize: Any = None,
                 deterministic: bool | None = None, any_budget: bool = False, trust_pickles: bool = False) -> None:
        self._check_policy(policy)
        if deterministic is not None and not isinstance(deterministic, bool):
            raise TypeError(f"deterministic must be None (sample on pure-exploration envs), True or False, got "
                            f"{deterministic!r}")
        if not isinstance(any_budget, bool):
            raise TypeError(f"any_budget must be True or False, got {any_budget!r}")
        if not isinstance(trust_pickles, bool):
            raise TypeError(f"trust_pickles must be True or False (True unpickles the policy's files, running any "
                            f"code they hold), got {trust_pickles!r}")
        if not (normalize is None or isinstance(normalize, (str, Path)) or hasattr(normalize, "normalize_obs")):
            raise TypeError(f"normalize must be None (the statistics saved with the policy), a VecNormalize, or the "
                            f"path of its .npz (bandit_gym.rl.save_normalize; a .pkl with trust_pickles=True), got "
                            f"{type(normalize).__name__}")
        self.policy = policy
        self.algo = None if algo is None else check.choice("algo", algo, ALGORITHMS)
        self.normalize = normalize
        self.deterministic = deterministic
        self.any_budget = any_budget
        self.trust_pickles = trust_pickles
        self._model: Any = None
        self._stats: Any = None
        super().__init__(tie_break="random")  # ties of an arm-wise policy's most likely arm

    @staticmethod
    def _check_policy(policy: Any) -> None:
        if isinstance(policy, (str, Path)):
            path = Path(policy)
            if not ((path / "model.zip").is_file() or (path.suffix == ".zip" and path.is_file())):
                raise ValueError(f"policy={str(policy)!r} must be a folder holding model.zip (written by "
                                 "bandit_gym.rl.TrainedPolicy.save), the path of a stable-baselines3 .zip, a "
                                 "TrainedPolicy, or a stable-baselines3 model or policy")
        elif not hasattr(policy, "predict") and not hasattr(policy, "model"):
            raise TypeError(f"policy must be a folder, a .zip path, a TrainedPolicy or a stable-baselines3 model or "
                            f"policy, got {type(policy).__name__}")

    @classmethod
    def data_files(cls, params: Mapping[str, Any]) -> tuple[Any, ...]:
        """A policy given as a path: its ``model.zip`` and saved ``vecnormalize.pkl`` (a folder) or the .zip
        itself, and a ``normalize`` file."""
        files: list[Path] = []
        policy, normalize = params.get("policy"), params.get("normalize")
        if isinstance(policy, (str, Path)):
            path = Path(policy)
            files += [path / "model.zip", path / "vecnormalize.pkl"] if path.is_dir() else [path]
        if isinstance(normalize, (str, Path)):
            files.append(Path(normalize))
        return tuple(files)

    def _policy_label(self) -> str:
        return str(self.policy) if isinstance(self.policy, (str, Path)) else f"<{type(self.policy).__name__}>"

    def _subject(self) -> str:
        """How an error names the policy: the argument as given."""
        return f"policy={self._policy_label()!r}"

    def params(self) -> dict[str, Any]:
        return {"policy": self._policy_label(), "algo": self.algo, "deterministic": self.deterministic,
                "any_budget": self.any_budget, "trust_pickles": self.trust_pickles}

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is not None and self.deterministic is not True:
            import torch

            self._load()  # before seeding: building a policy draws from torch's generator
            torch.manual_seed(seed)

    def check_env(self, env: Any) -> None:
        """Load the policy and act once on ``env``'s first observation, so that a file that does not load (not a
        zip, another ``algo``, pickles without ``trust_pickles``) or a policy of another env, K or budget is the
        experiment spec's one-line error rather than a failed cell."""
        obs, _ = env.reset(seed=0)
        self.reset()
        self.act(obs)
        self.reset()

    def __getstate__(self) -> dict[str, Any]:
        state = super().__getstate__()
        if isinstance(self.policy, (str, Path)):
            state["_model"] = state["_stats"] = None  # re-read from the path in the worker
            state.pop("_policies", None)
        return state

    def _reads_levels(self) -> bool:
        """A policy that reads the threshold bandit's per-level counts (``level_exceed``, ``level_trials`` in its
        observation space) has them checked as DKWUCB's are (read at the first ``act``)."""
        self._load()
        return "level_exceed" in self._shapes

    # ----------------------------------------------------------------------------------------------- loading
    def _load(self) -> None:
        if self._model is not None:
            return
        if isinstance(self.policy, (str, Path)):
            self._model, self._stats = self._read(Path(self.policy))
        elif hasattr(self.policy, "predict"):
            self._model, self._stats = self.policy, self._normalize_stats(self.normalize)
        else:  # a TrainedPolicy
            self._model, self._stats = self.policy.model, self.policy.normalize
        self._check_spaces()

    def _read(self, path: Path) -> tuple[Any, Any]:
        """The model and statistics of a folder or a ``.zip`` (unpickled only with ``trust_pickles``)."""
        from bandit_gym.rl.saved import saved_algo
        from bandit_gym.rl.sb3_files import _load_model, _normalize_beside

        folder = (path / "model.zip").is_file()
        model_zip = path / "model.zip" if folder else path
        subject = self._subject()
        algo = saved_algo(model_zip.parent, self.algo) if model_zip.name == "model.zip" else self.algo
        model = _load_model(model_zip, algo, self.trust_pickles, subject)
        if self.normalize is not None:
            return model, self._normalize_stats(self.normalize)
        return model, _normalize_beside(model_zip, self.trust_pickles, subject, named_alone=not folder)

    def _normalize_stats(self, normalize: Any) -> Any:
        """A ``VecNormalize`` as given, or read (frozen) from the path of its ``.npz`` (or, with
        ``trust_pickles``, of its ``.pkl``)."""
        if isinstance(normalize, (str, Path)):
            from bandit_gym.rl.sb3_files import _load_normalize

            return _load_normalize(Path(normalize), self.trust_pickles, f"normalize={str(normalize)!r}")
        return normalize

    def _check_spaces(self) -> None:
        from gymnasium import spaces

        from bandit_gym.rl.saved import trained_budget

        space = self._model.observation_space
        if not isinstance(space, spaces.Dict):
            raise ValueError(f"{self._subject()}: the model was trained on {space}, not on a bandit_gym env's Dict "
                             "observation")
        self._shapes = {key: box.shape for key, box in space.spaces.items()}
        self._budget = trained_budget(space)
        action = self._model.action_space
        if not isinstance(action, (spaces.Discrete, spaces.MultiDiscrete)):
            raise ValueError(f"{self._subject()}: the model acts in {action}, not in a bandit_gym env's Discrete or "
                             "MultiDiscrete space")
        self._choose_only = isinstance(action, spaces.Discrete)
        from bandit_gym.rl.armwise import ArmwisePolicy  # stable-baselines3 is loaded: the model is one

        self._net = getattr(self._model, "policy", self._model)  # an SB3 model's policy, or a policy as given
        self._armwise = isinstance(self._net, ArmwisePolicy) and getattr(self._stats, "norm_obs", False) is False
        self._policies: dict[tuple, Any] = {}
        if isinstance(action, spaces.Discrete):
            self._choices, self._width = int(action.n), 1
        else:
            self._choices, self._width = int(action.nvec[0]), len(action.nvec)

    # ----------------------------------------------------------------------------------------------- playing
    def select(self, obs: Obs) -> np.ndarray:
        """The policy's arm in every copy (``(N,)``; K, stop, where a pure-exploration policy stops), from one
        ``predict`` per observation (``policy_action``), which a subclass may call as ``super().select(obs)``."""
        return self._compiled_decision(obs, self._policy_step)[:, 0].copy()

    def answer(self, obs: Obs) -> np.ndarray:
        """The answer bits the policy submits with its arm (``(N, K)``): a ``MultiDiscrete`` policy's own, else
        the family's empirical answer; from the same ``predict`` as ``select``."""
        return self._compiled_decision(obs, self._policy_step)[:, 1:].copy()

    def _policy_step(self, obs: Obs, action: np.ndarray, follows: bool = True) -> np.ndarray:
        """``policy_action`` written into ``action`` (an online env's arm in its first column)."""
        chosen = self.policy_action(obs, family_of(obs))
        if chosen.ndim == 1:
            action[:, 0] = chosen
        else:
            action[:] = chosen
        return action

    @writes_answer
    def _act_batch(self, obs: Obs, last: np.ndarray, family: Family) -> np.ndarray:
        """``select`` and ``answer`` of one ``predict`` (``policy_action``)."""
        chosen = self.policy_action(obs, family)
        return self._decided_with(chosen) if chosen.ndim == 2 else chosen

    def policy_action(self, obs: Obs, family: Family) -> np.ndarray:
        """The whole action of every copy from one ``predict`` over the batch: ``(N,)`` arms on an online env,
        ``(N, K + 1)`` ``[arm, answer bits]`` on a pure-exploration one."""
        self._load()
        k = obs["counts"].shape[1]
        sample = family.pure_exploration if self.deterministic is None else not self.deterministic
        batch = {key: np.asarray(obs[key], dtype=np.float32) for key in self._shapes if key in obs}
        if self._armwise:  # one set of weights for any K and budget: the policy rebuilt for these shapes
            policy = self._armwise_policy(batch, family)
            if sample:
                actions, _ = policy.predict(batch, deterministic=False)
            else:  # the most likely arm; arms with equal features have equal logits: the agent's tie rule
                from bandit_gym.rl.armwise import logits_and_value

                actions = self.argmax(logits_and_value(policy, batch)[0])
        else:
            self._check_obs(obs, k, family)
            if self._stats is not None:
                batch = self._stats.normalize_obs(batch)
            actions, _ = self._model.predict(batch, deterministic=not sample)
        actions = np.asarray(actions, dtype=np.int64)
        if not family.pure_exploration or not self._choose_only:
            return actions
        return np.concatenate([actions.reshape(-1, 1), self._answer(obs, family)], axis=1)

    def _check_obs(self, obs: Obs, k: int, family: Family) -> None:
        """Refuse a batch of another env, K, action space or budget than the policy's (see the class doc)."""
        wanted = {key: obs[key].shape[1:] for key in self._shapes if key in obs}
        if wanted != self._shapes:
            raise ValueError(f"{self._subject()}: the model was trained on observations {self._shapes}, but this env "
                             f"gives { {key: value.shape[1:] for key, value in obs.items()} }: train it on this env "
                             "id and K")
        full = k + 1 if family.pure_exploration else 1
        if self._choose_only and family.pure_exploration and self._choices not in (k, k + 1):
            raise ValueError(f"{self._subject()}: the model chooses among {self._choices} actions; this env has "
                             f"K = {k} arms")
        if not self._choose_only and (self._width != full or self._choices not in (k, k + 1)):
            raise ValueError(f"{self._subject()}: the model acts in MultiDiscrete of {self._width} entries "
                             f"({self._choices} choices first); this {family} env takes {full} entries over K = {k} "
                             "arms")
        if not family.pure_exploration and self._choices != k:
            raise ValueError(f"{self._subject()}: the model chooses among {self._choices} actions; this env has "
                             f"K = {k} arms")
        if self._budget is not None and not self.any_budget and (self.total_budget != self._budget).any():
            budgets = np.unique(self.total_budget)
            raise ValueError(f"{self._subject()}: the policy was trained on budget {self._budget} (the bound of "
                             f"budget_left in its observation space), but plays episodes of budget "
                             f"{budgets.tolist()}: the budget left is part of what it reads; play it at "
                             f"budget={self._budget}, train it on this budget, or pass any_budget=True to play it "
                             "anyway")

    def _armwise_policy(self, batch: dict[str, np.ndarray], family: Family) -> Any:
        """The arm-wise policy for the batch's shapes (the trained one when they are its own)."""
        from gymnasium import spaces

        missing = sorted(set(self._shapes) - set(batch))
        if missing:
            raise ValueError(f"{self._subject()}: the model reads the observation entries {missing}, which this "
                             f"{family} env does not give: train it on this env family")
        shapes = tuple((key, value.shape[1:]) for key, value in sorted(batch.items()))
        if shapes not in self._policies:
            k = batch["counts"].shape[1]
            space = spaces.Dict({key: spaces.Box(-np.inf, np.inf, shape=shape, dtype=np.float32)
                                 for key, shape in shapes})
            own = all(self._shapes[key] == shape for key, shape in shapes)
            self._policies[shapes] = self._net if own else self._net.for_spaces(space, spaces.Discrete(k))
        return self._policies[shapes]

    def _answer(self, obs: Obs, family: Family) -> np.ndarray:
        """The family's empirical answer bits, ``(N, K)``: thresholding ``1{theta_hat_i >= theta}``; best arm and
        top K the m largest empirical means, an arm never pulled last, ties by the agent's tie rule (as every
        agent's empirical answer)."""
        if not family.answers_a_set:  # thresholding: the family's rule, one arm at a time (no ties)
            return contract(family).answer_rule()(obs)
        from bandit_gym.agents.ranking import top_m_answers

        n, k = obs["counts"].shape
        action = np.zeros((n, k + 1), dtype=np.int64)
        return top_m_answers(obs["m"], obs["counts"], obs["sums"], self._arm_order().arm_at, action)[:, 1:]
