"""No traps for RL users: time limits on pure-exploration envs, wrapper order, SB3Agent's defaults and refusals,
the training callback's logged values."""

from __future__ import annotations

import csv
import pickle
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import TimeLimit
from stable_baselines3 import DQN, PPO
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.logger import configure

from bandit_gym.rl import SB3Agent
from bandit_gym.rollout import play_vector
from bandit_gym.wrappers import (
    EmpiricalAnswer,
    EmpiricalAnswerVector,
    RecordAnytimeRegret,
    RecordAnytimeRegretVector,
    RecordEpisodeRegret,
    RecordEpisodeRegretVector,
)

#: one id per pure-exploration env class, with its budget
PURE = [("ThresholdingBandit-v0", 20), ("BestArmIdentification-v0", 20), ("TopKIdentification-v0", 20),
        ("CorrelatedBestArm-v0", 20), ("ModelSelection-v0", 10)]


# ----------------------------------------------------------------------------------------------- time limits
@pytest.mark.parametrize(("env_id", "budget"), PURE)
def test_a_time_limit_that_cuts_the_answer_is_refused_with_the_budget_to_pass(env_id: str, budget: int) -> None:
    routes = {
        "gym.make": lambda: gym.make(env_id, budget=budget, max_episode_steps=budget),
        "TimeLimit": lambda: TimeLimit(gym.make(env_id, budget=budget), budget),
        "sync vector": lambda: gym.make_vec(env_id, num_envs=2, vectorization_mode="sync", budget=budget,
                                            max_episode_steps=budget),
    }
    for make in routes.values():
        with pytest.raises(ValueError, match=rf"max_episode_steps={budget} .* Pass budget={budget - 1} "):
            make().reset(seed=0)
    with pytest.raises(ValueError, match=rf"gym.make_vec.*max_episode_steps={budget} .* Pass budget={budget - 1}"):
        gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", budget=budget,
                     max_episode_steps=budget)
    # a limit the episode never reaches (T pulls + the answer step) is harmless
    env = RecordEpisodeRegret(gym.make(env_id, budget=budget, max_episode_steps=budget + 1))
    env.reset(seed=0)
    k = env.unwrapped.engine.num_arms
    for t in range(budget + 1):
        _, reward, terminated, truncated, info = env.step(np.r_[t % k, np.zeros(k, dtype=np.int64)])
    # the last step is the answer step (TimeLimit flags it truncated too, as Gymnasium does at the limit)
    assert terminated and truncated and info["bandit"]["return"] == reward and info["bandit"]["length"] == budget + 1
    vector = gym.make_vec(env_id, num_envs=2, vectorization_mode="vector_entry_point", budget=budget,
                          max_episode_steps=budget + 5)
    assert vector.unwrapped.max_episode_steps is None  # never binding


def test_the_wrappers_refuse_a_time_limit_under_them_at_construction() -> None:
    limited = gym.make("ThresholdingBandit-v0", budget=20, max_episode_steps=10)
    for wrapper in (RecordEpisodeRegret, EmpiricalAnswer, lambda env: RecordAnytimeRegret(env, [5, 10])):
        with pytest.raises(ValueError, match=r"over a TimeLimit: max_episode_steps=10 .* Pass budget=9"):
            wrapper(limited)


class CutAfter(gym.Wrapper):
    """A time limit that is not Gymnasium's TimeLimit: truncates after ``steps`` steps."""

    def __init__(self, env: gym.Env, steps: int) -> None:
        super().__init__(env)
        self.steps, self.t = steps, 0

    def reset(self, **kwargs: object) -> tuple:
        self.t = 0
        return self.env.reset(**kwargs)

    def step(self, action: object) -> tuple:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.t += 1
        return obs, reward, terminated, truncated or self.t >= self.steps, info


def test_a_truncation_the_env_did_not_make_is_refused_instead_of_reporting_a_regret() -> None:
    env = RecordEpisodeRegret(CutAfter(gym.make("ThresholdingBandit-v0", budget=20), 5))
    env.reset(seed=0)
    action = np.zeros(11, dtype=np.int64)
    for _ in range(4):
        env.step(action)
    with pytest.raises(ValueError, match="truncated by a wrapper before the env scored its answer"):
        env.step(action)


def test_the_threshold_bandit_takes_a_time_limit_on_both_routes_and_the_vector_env() -> None:
    """Rewards are paid every round there: a limit of n steps truncates after n rounds, and the recorded regret
    is that of those n rounds."""
    made = RecordEpisodeRegret(gym.make("ThresholdBandit-v0", max_episode_steps=7))
    wrapped = RecordEpisodeRegret(TimeLimit(gym.make("ThresholdBandit-v0"), 7))
    for env in (made, wrapped):
        env.reset(seed=0)
        for t in range(7):
            _, _, terminated, truncated, info = env.step(t % 3)
        assert truncated and not terminated and info["bandit"]["length"] == 7 and info["bandit"]["regret"] > 0
    venv = RecordEpisodeRegretVector(gym.make_vec("ThresholdBandit-v0", num_envs=3,
                                                  vectorization_mode="vector_entry_point", max_episode_steps=7))
    obs, _ = venv.reset(seed=0)
    for t in range(7):
        obs, _, terminated, truncated, info = venv.step(np.full(3, t % 3))
        assert truncated.all() == (t == 6) and not terminated.any()
    assert info["bandit"]["length"].tolist() == [7, 7, 7] and obs["budget_left"][:, 0].tolist() == [993] * 3
    obs, rewards, _, truncated, _ = venv.step(np.zeros(3, dtype=np.int64))  # NEXT_STEP: the autoreset step
    assert obs["budget_left"][:, 0].tolist() == [1000] * 3 and not truncated.any() and not rewards.any()
    with pytest.raises(ValueError, match="max_episode_steps must be a positive integer"):
        gym.make_vec("ThresholdBandit-v0", num_envs=2, vectorization_mode="vector_entry_point", max_episode_steps=0)


# ----------------------------------------------------------------------------------------------- wrapper order
def _play_single(env: gym.Env, seed: int) -> dict:
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    while True:
        _, _, terminated, truncated, info = env.step(int(rng.integers(10)))
        if terminated or truncated:
            return info


@pytest.mark.parametrize("env_id", ["ThresholdingBandit-v0", "BestArmIdentification-Audibert2010Problem1-v0"])
def test_record_and_empirical_answer_work_in_either_order(env_id: str) -> None:
    def base() -> gym.Env:
        return gym.make(env_id, budget=25)

    for seed in range(3):
        inner = _play_single(RecordEpisodeRegret(EmpiricalAnswer(base())), seed)["bandit"]
        outer = _play_single(EmpiricalAnswer(RecordEpisodeRegret(base())), seed)["bandit"]
        np.testing.assert_equal(inner, outer)  # the final answer (an array) too
        assert inner["pulls"] == 25 and inner["regret"] == -inner["return"]
        first = _play_single(RecordAnytimeRegret(EmpiricalAnswer(base()), [5, 25]), seed)["anytime"]
        second = _play_single(EmpiricalAnswer(RecordAnytimeRegret(base(), [5, 25])), seed)["anytime"]
        np.testing.assert_array_equal(first["regret"], second["regret"])
        assert first["regret"][-1] == inner["regret"]


def _play_vector(env: gym.vector.VectorEnv, steps: int) -> list[dict]:
    env.reset(seed=4)
    rng = np.random.default_rng(4)
    ended = []
    for _ in range(steps):
        _, _, _, _, info = env.step(rng.integers(10, size=env.num_envs))
        for key in ("bandit", "anytime"):
            if key in info:
                ended.append({name: np.asarray(value)[info["_" + key]] if np.ndim(value) and len(value) ==
                              env.num_envs else value for name, value in info[key].items()})
    return ended


def test_vector_record_and_empirical_answer_work_in_either_order_and_with_same_step_autoreset() -> None:
    def base(**kwargs: object) -> gym.vector.VectorEnv:
        return gym.make_vec("ThresholdingBandit-v0", num_envs=6, vectorization_mode="vector_entry_point", budget=15,
                            **kwargs)

    steps = 2 * 16 + 1  # two episodes; the NEXT_STEP env spends one step on each autoreset
    runs = [_play_vector(RecordEpisodeRegretVector(EmpiricalAnswerVector(base())), steps),
            _play_vector(EmpiricalAnswerVector(RecordEpisodeRegretVector(base())), steps)]
    same_step = [_play_vector(RecordEpisodeRegretVector(EmpiricalAnswerVector(base(autoreset_mode="SameStep"))),
                              32),
                 _play_vector(EmpiricalAnswerVector(RecordEpisodeRegretVector(base(autoreset_mode="SameStep"))), 32)]
    # either order gives the same records; SAME_STEP's first episodes are NEXT_STEP's (its second episodes see
    # other actions: NEXT_STEP spends one of the action draws on the autoreset step)
    pairs = [(runs[1], runs[0]), (same_step[0], same_step[1]), (same_step[0][:1], runs[0][:1])]
    for got_run, want_run in pairs:
        assert len(got_run) == len(want_run) >= 1 and len(runs[0]) == len(same_step[0]) == 2
        for got, want in zip(got_run, want_run, strict=True):
            for name in ("regret", "error", "pulls", "length", "return"):
                np.testing.assert_array_equal(got[name], want[name])
    assert (runs[0][0]["pulls"] == 15).all() and (runs[0][0]["regret"] == -runs[0][0]["return"]).all()
    anytime = [_play_vector(RecordAnytimeRegretVector(EmpiricalAnswerVector(base()), [5, 15]), steps),
               _play_vector(EmpiricalAnswerVector(RecordAnytimeRegretVector(base(), [5, 15])), steps)]
    for first, second in zip(*anytime, strict=True):
        np.testing.assert_array_equal(first["regret"], second["regret"])
    np.testing.assert_array_equal(anytime[0][0]["regret"][:, -1], runs[0][0]["regret"])


# ----------------------------------------------------------------------------------------------- SB3Agent
def _model(algo: type, env_id: str, budget: int, choose_only: bool = False) -> object:
    env = gym.make(env_id, budget=budget)
    return algo("MultiInputPolicy", EmpiricalAnswer(env) if choose_only else env, seed=0, device="cpu")


def _distinct_arms(agent: SB3Agent, env_id: str, budget: int) -> np.ndarray:
    venv = gym.make_vec(env_id, num_envs=8, vectorization_mode="vector_entry_point", budget=budget)
    obs, _ = venv.reset(seed=0)
    agent.reset(seed=0)
    arms = []
    for _ in range(budget):
        action = agent.act(obs)
        arms.append(action[:, 0].copy())
        obs, *_ = venv.step(action)
    return np.array([len(np.unique(column)) for column in np.array(arms).T])


def test_sb3_agent_samples_on_pure_exploration_and_is_greedy_on_the_threshold_bandit() -> None:
    """The default (deterministic=None) does not collapse: an (untrained) PPO policy played greedily pulls the
    same few arms in every copy; sampled, as by default on a pure-exploration env, it pulls nearly every arm."""
    model = _model(PPO, "ThresholdingBandit-Tao2019Setup1-v0", 30, choose_only=True)
    spread = _distinct_arms(SB3Agent(model), "ThresholdingBandit-Tao2019Setup1-v0", 30)
    greedy = _distinct_arms(SB3Agent(model, deterministic=True), "ThresholdingBandit-Tao2019Setup1-v0", 30)
    assert spread.min() >= 8 and greedy.max() <= 4, (spread, greedy)
    threshold = PPO("MultiInputPolicy", gym.make("ThresholdBandit-v0"), seed=0, device="cpu")
    env = gym.make("ThresholdBandit-v0")
    obs, _ = env.reset(seed=0)
    agent = SB3Agent(threshold)
    agent.reset(seed=0)
    for _ in range(20):
        action = agent.act(obs)
        assert action == threshold.predict(obs, deterministic=True)[0]
        obs, *_ = env.step(action)
    with pytest.raises(TypeError, match="deterministic must be None"):
        SB3Agent(threshold, deterministic="yes")


def test_sb3_agent_loads_a_zip_path_and_a_folder_with_its_algo(tmp_path: Path) -> None:
    from bandit_gym.rl import TrainedPolicy

    dqn = _model(DQN, "ThresholdingBandit-Tao2019Setup1-v0", 30, choose_only=True)
    dqn.save(tmp_path / "dqn.zip")
    TrainedPolicy(dqn).save(tmp_path / "folder")
    env = gym.make("ThresholdingBandit-Tao2019Setup1-v0", budget=30)
    obs, _ = env.reset(seed=0)
    want = SB3Agent(dqn).act(obs)
    for agent in (SB3Agent(tmp_path / "dqn.zip", algo="DQN"), SB3Agent(str(tmp_path / "folder")),
                  SB3Agent(tmp_path / "folder" / "model.zip")):
        np.testing.assert_array_equal(agent.act(obs), want)
        assert pickle.loads(pickle.dumps(agent))._model is None  # a path is re-read in a worker
    clone = pickle.loads(pickle.dumps(SB3Agent(tmp_path / "dqn.zip", algo="DQN")))
    np.testing.assert_array_equal(clone.act(obs), want)
    with pytest.raises(ValueError, match=r"could not be loaded as a PPO .* algo="):
        SB3Agent(tmp_path / "dqn.zip").act(obs)
    with pytest.raises(ValueError, match=r"algo='PPO', but the policy .* is a DQN"):
        SB3Agent(tmp_path / "folder", algo="PPO").act(obs)
    with pytest.raises(ValueError, match=r"\.zip"):
        SB3Agent(tmp_path / "missing.zip")


def test_sb3_agent_refuses_another_budget_or_space() -> None:
    model = _model(PPO, "ThresholdingBandit-Tao2019Setup1-v0", 30, choose_only=True)
    venv = gym.make_vec("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, vectorization_mode="vector_entry_point",
                        budget=40)
    with pytest.raises(ValueError, match=r"trained on budget 30 .* budget \[40\].* play it at budget=30"):
        play_vector(venv, SB3Agent(model), seed=0)
    assert play_vector(venv, SB3Agent(model, any_budget=True), seed=0)["pulls"].tolist() == [40] * 4
    with pytest.raises(ValueError, match="trained on observations"):  # another K
        play_vector(gym.make_vec("ThresholdingBandit-Tao2019Setup2-v0", num_envs=2,
                                 vectorization_mode="vector_entry_point", budget=30), SB3Agent(model), seed=0)
    full = _model(PPO, "TopKIdentification-v0", 30)  # full MultiDiscrete action on n = 100 arms
    with pytest.raises(ValueError, match="trained on observations"):
        play_vector(gym.make_vec("BestArmIdentification-v0", num_envs=2, vectorization_mode="vector_entry_point",
                                 budget=30), SB3Agent(full), seed=0)


# ----------------------------------------------------------------------------------------------- callback
class Recorder(BaseCallback):
    """Every ``info["bandit"]`` of the episodes that ended, with the step count at which it arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: list[tuple[int, dict]] = []

    def _on_step(self) -> bool:
        self.ended += [(self.num_timesteps, info["bandit"]) for info in self.locals["infos"] if "bandit" in info]
        return True


def test_bandit_metrics_callback_logs_the_regret_of_the_episodes_that_ended(tmp_path: Path) -> None:
    from bandit_gym.rl import BanditMetricsCallback, make_vec_env

    venv = make_vec_env("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, discrete=True, budget=9)
    model = PPO("MultiInputPolicy", venv, n_steps=20, batch_size=40, n_epochs=1, seed=0, device="cpu")
    model.set_logger(configure(str(tmp_path), ["csv"]))
    recorder, callback = Recorder(), BanditMetricsCallback(window=6)
    model.learn(total_timesteps=160, callback=[recorder, callback])
    with open(tmp_path / "progress.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 2 and callback.episodes == len(recorder.ended) == 160 // 10
    for row in rows:  # each dump: the last 6 episodes ended by then
        seen = [episode for step, episode in recorder.ended if step <= int(row["time/total_timesteps"])][-6:]
        for name in ("regret", "error", "return"):
            assert float(row[f"bandit/{name}"]) == pytest.approx(np.mean([episode[name] for episode in seen]))
        # the return SB3's own monitor logged (rewards summed independently), and the loss paid at the end:
        # the aggregate regret of the answer
        monitor = [episode["return"] for _, episode in recorder.ended][:int(row["bandit/episodes"])]
        assert float(row["rollout/ep_rew_mean"]) == pytest.approx(np.mean(monitor))
        assert float(row["bandit/regret"]) == pytest.approx(-float(row["bandit/return"]))
    assert all(episode["pulls"] == 9 and episode["length"] == 10 for _, episode in recorder.ended)


def test_bandit_progress_bar_counts_the_steps_and_shows_the_recent_regret() -> None:
    import io

    from bandit_gym.rl import BanditProgressBar, make_vec_env

    venv = make_vec_env("ThresholdingBandit-Tao2019Setup1-v0", num_envs=4, discrete=True, budget=9)
    model = PPO("MultiInputPolicy", venv, n_steps=20, batch_size=40, n_epochs=1, seed=0, device="cpu")
    recorder, drawn = Recorder(), io.StringIO()
    bar = BanditProgressBar(window=6, file=drawn)
    model.learn(total_timesteps=160, callback=[recorder, bar])
    assert bar.bar.n == 160 and bar.bar.total == 160
    last = [episode["regret"] for _, episode in recorder.ended][-6:]
    assert bar.bar.postfix == f"episodes=6, regret={np.mean(last):.4g}, error=" + \
        f"{np.mean([episode['error'] for _, episode in recorder.ended][-6:]):.4g}"
    assert "160/160" in drawn.getvalue()
    # a total that is no multiple of a rollout (4 envs x 20 steps): SB3 plays the whole last rollout, and the bar
    # counts to its end, at 100%, not past its total
    bar = BanditProgressBar(window=6, file=io.StringIO())
    model.learn(total_timesteps=100, callback=bar)
    assert bar.bar.n == bar.bar.total == 160 and "100%" in bar.file.getvalue()


def test_train_draws_its_progress_where_asked_and_only_on_a_terminal_by_default(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from bandit_gym.rl import train

    kwargs = {"total_timesteps": 64, "seed": 0, "num_envs": 2, "env_kwargs": {"horizon": 16}}
    train("ThresholdBandit-v0", **kwargs)  # the test's standard error is not a terminal: no bar
    assert "training" not in capsys.readouterr().err
    train("ThresholdBandit-v0", progress=True, **kwargs)
    assert "training" in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    train("ThresholdBandit-v0", **kwargs)
    assert "training" in capsys.readouterr().err
    with pytest.raises(TypeError, match="progress must be True, False or None"):
        train("ThresholdBandit-v0", progress="yes", **kwargs)


def sb3_folders(folder: Path) -> list[Path]:
    return [path for path in folder.iterdir() if path.name.startswith("SB3-")]


def test_training_writes_nothing_in_the_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # SB3's learn makes an empty SB3-<time> folder in the system's temporary folder whenever it configures its own
    # logger (no tensorboard_log); train and train_armwise give it one that writes no file, and keep its table
    import tempfile

    from bandit_gym.rl import quiet_logger, train, train_armwise

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.delenv("SB3_LOGDIR", raising=False)
    kwargs = {"total_timesteps": 64, "seed": 0, "num_envs": 2, "env_kwargs": {"horizon": 16}}
    train("ThresholdBandit-v0", **kwargs)
    train_armwise("threshold", total_timesteps=64, seed=0)
    assert not capsys.readouterr().out
    trained = train("ThresholdBandit-v0", verbose=1, **kwargs)
    assert "total_timesteps" in capsys.readouterr().out  # SB3's table, as without the logger
    assert sb3_folders(tmp_path) == []  # (torch may leave its compile cache there: not ours to move)
    model = PPO("MultiInputPolicy", trained.model.get_env(), n_steps=16, batch_size=32, seed=0, device="cpu")
    model.learn(total_timesteps=32)  # what SB3 does without it: the check above can fail
    assert len(sb3_folders(tmp_path)) == 1
    board = PPO("MultiInputPolicy", trained.model.get_env(), tensorboard_log=str(tmp_path / "tb"), device="cpu")
    quiet_logger(board)  # a model that logs to tensorboard keeps SB3's logger
    assert not board._custom_logger
