"""Saved SB3 policies are read without unpickling unless ``trust_pickles=True`` (``SB3Agent``, ``bandit_gym.rl``),
and the mistakes made when naming one are clear errors.

A crafted file here is a real SB3 file whose pickled entries are replaced by payloads that, when unpickled, write a
marker file in ``tmp_path`` and then hand back the original object (so that with the opt-in the model loads as
before, and the markers show what was unpickled)."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import cloudpickle
import gymnasium as gym
import numpy as np
import pytest
from stable_baselines3 import A2C, PPO

from bandit_gym import rl
from bandit_gym.rl import ArmwisePPO, SB3Agent, TrainedPolicy, load, load_model, load_normalize, make_vec_env, train

HORIZON = 50


# ----------------------------------------------------------------------------------------------- helpers
def _mark(marker: str, value: Any) -> Any:
    """What a payload runs when unpickled: write ``marker``, hand back ``value``."""
    Path(marker).write_text("ran")
    return value


class _Payload:
    """Unpickles to ``_mark(marker, value)``: code from the file runs."""

    def __init__(self, marker: Path, value: Any) -> None:
        self.marker, self.value = str(marker), value

    def __reduce__(self) -> tuple[Any, ...]:
        return _mark, (self.marker, self.value)


def _blob(marker: Path, value: Any) -> str:
    return base64.b64encode(cloudpickle.dumps(_Payload(marker, value))).decode()


def _rewrite(source: Path, target: Path, markers: Path, extra: dict[str, Any] | None = None) -> list[Path]:
    """Copy the SB3 zip ``source`` to ``target`` with every pickled entry of its ``data`` replaced by a payload (the
    readable text beside each kept as SB3 wrote it) and the ``extra`` entries added as payloads; the markers."""
    with zipfile.ZipFile(source) as archive:
        entries = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(entries["data"])
    planted = []
    for key, entry in data.items():
        if isinstance(entry, dict) and ":serialized:" in entry:
            original = cloudpickle.loads(base64.b64decode(entry[":serialized:"]))  # our own file
            planted.append(markers / f"{key}.ran")
            entry[":serialized:"] = _blob(planted[-1], original)
    for key, value in (extra or {}).items():
        planted.append(markers / f"{key}.ran")
        data[key] = {":type:": f"<class '{type(value).__name__}'>", ":serialized:": _blob(planted[-1], value)}
    entries["data"] = json.dumps(data).encode()
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as archive:
        for name, content in entries.items():
            archive.writestr(name, content)
    return planted


class UnpickledError(AssertionError):
    """Something was unpickled."""


@contextmanager
def no_unpickling(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Any call of pickle's or cloudpickle's loaders fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise UnpickledError("something was unpickled")

    with monkeypatch.context() as patch:
        for module in (pickle, cloudpickle):
            patch.setattr(module, "load", refuse)
            patch.setattr(module, "loads", refuse)
        yield


def _obs() -> dict[str, np.ndarray]:
    return gym.make("ThresholdBandit-v0", horizon=HORIZON).reset(seed=0)[0]


def _episode_actions(agent: SB3Agent, seed: int = 0) -> list[int]:
    env = gym.make("ThresholdBandit-v0", horizon=HORIZON)
    obs, _ = env.reset(seed=seed)
    agent.reset(seed=seed)
    actions = []
    for _ in range(HORIZON):
        action = agent.act(obs)
        actions.append(int(action))
        obs, *_ = env.step(action)
    return actions


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> tuple[TrainedPolicy, Path]:
    """A PPO policy on the threshold bandit (normalised observations), and the folder it was saved to."""
    policy = train("ThresholdBandit-v0", total_timesteps=256, seed=0, num_envs=2, env_kwargs={"horizon": HORIZON})
    return policy, policy.save(tmp_path_factory.mktemp("trusted") / "ppo")


def _copy(folder: Path, target: Path, files: tuple[str, ...]) -> Path:
    target.mkdir(parents=True)
    for name in files:
        shutil.copy(folder / name, target / name)
    return target


# ----------------------------------------------------------------------------------------------- pickles
def test_a_crafted_zip_runs_no_code_by_default_and_all_of_it_with_the_opt_in(trained, tmp_path) -> None:
    """Every pickled entry of model.zip (policy class, spaces, schedules, ...) holds a payload: SB3Agent (folder or
    zip) and bandit_gym.rl's loaders run none of them and play as the model does; trust_pickles=True runs them all,
    as SB3's own load does."""
    policy, folder = trained
    evil = _copy(folder, tmp_path / "evil", ("metadata.json",))
    markers = _rewrite(folder / "model.zip", evil / "model.zip", tmp_path)
    assert {"policy_class.ran", "observation_space.ran", "action_space.ran", "clip_range.ran"} <= {
        marker.name for marker in markers}
    stats = policy.normalize
    want = _episode_actions(SB3Agent(policy.model, normalize=stats))
    assert _episode_actions(SB3Agent(evil, normalize=stats)) == want
    assert not [marker for marker in markers if marker.exists()]
    assert _episode_actions(SB3Agent(evil / "model.zip", normalize=folder / "vecnormalize.npz")) == want
    loaded = load(evil)
    assert loaded.model.observation_space == policy.model.observation_space
    assert load_model(evil / "model.zip").action_space == policy.model.action_space
    assert not [marker for marker in markers if marker.exists()]
    assert _episode_actions(SB3Agent(evil, normalize=stats, trust_pickles=True)) == want
    assert all(marker.exists() for marker in markers)


def test_a_pickled_entry_that_is_not_rebuilt_is_refused_naming_it_and_the_opt_in(trained, tmp_path) -> None:
    _, folder = trained
    evil = _copy(folder, tmp_path / "evil", ("metadata.json",))
    (marker,) = [m for m in _rewrite(folder / "model.zip", evil / "model.zip", tmp_path, {"payload": 1})
                 if m.name == "payload.ran"]
    with pytest.raises(ValueError, match=r"policy='.*evil'.* its entry 'payload' is pickled.*trust_pickles=True"):
        SB3Agent(evil).act(_obs())
    with pytest.raises(ValueError, match=r"folder='.*evil'.* its entry 'payload' is pickled.*trust_pickles=True"):
        load(evil)
    with pytest.raises(ValueError, match=r"path='.*model\.zip'.* its entry 'payload'"):
        load_model(evil / "model.zip")
    assert not marker.exists()
    assert load(evil, trust_pickles=True).model.payload == 1 and marker.exists()


def test_a_pickled_vecnormalize_beside_a_zip_is_not_read_without_the_opt_in(trained, tmp_path) -> None:
    """A vecnormalize.pkl holding a payload lies beside model.zip, with no vecnormalize.npz: naming the zip alone,
    or the folder, is a ValueError naming the file and the choices, and nothing runs; normalize= (the .npz) or
    trust_pickles=True choose the statistics."""
    policy, folder = trained
    beside = _copy(folder, tmp_path / "beside", ("model.zip", "metadata.json"))
    marker = tmp_path / "vecnormalize.ran"
    (beside / "vecnormalize.pkl").write_bytes(cloudpickle.dumps(_Payload(marker, policy.normalize)))
    obs = _obs()
    with pytest.raises(ValueError, match=r"policy='.*model\.zip'.*vecnormalize\.pkl lies beside model\.zip.*"
                                         r"normalize=.*trust_pickles=True"):
        SB3Agent(beside / "model.zip").act(obs)
    with pytest.raises(ValueError, match=r"policy='.*beside'.*vecnormalize\.pkl.*trust_pickles=True.*re-save"):
        SB3Agent(beside).act(obs)
    with pytest.raises(ValueError, match=r"folder='.*beside'.*vecnormalize\.pkl.*trust_pickles=True"):
        load(beside)
    with pytest.raises(ValueError, match=r"normalize='.*vecnormalize\.pkl'.* a pickle.*trust_pickles=True"):
        SB3Agent(beside / "model.zip", normalize=beside / "vecnormalize.pkl").act(obs)
    assert not marker.exists()
    want = _episode_actions(SB3Agent(policy.model, normalize=policy.normalize))
    assert _episode_actions(SB3Agent(beside / "model.zip", normalize=folder / "vecnormalize.npz")) == want
    assert not marker.exists()
    assert _episode_actions(SB3Agent(beside / "model.zip", trust_pickles=True)) == want and marker.exists()


def test_a_folder_saved_with_only_the_pickle_is_re_saved_as_its_error_says(trained, tmp_path, monkeypatch) -> None:
    policy, folder = trained
    old = _copy(folder, tmp_path / "old", ("model.zip", "metadata.json", "vecnormalize.pkl"))
    with pytest.raises(ValueError, match=r"re-save the folder once: bandit_gym\.rl\.load\(.*trust_pickles=True\)"
                                         r"\.save\(.*\) writes vecnormalize\.npz"):
        load(old)
    load(old, trust_pickles=True).save(old)
    batch = {key: np.stack([value, 2 * value]) for key, value in _obs().items()}
    with no_unpickling(monkeypatch):
        again = load(old)
        stats = again.normalize.normalize_obs(batch)
    want = policy.normalize.normalize_obs(batch)
    assert all(np.array_equal(stats[key], want[key]) for key in want)
    assert again.normalize.training is False and again.normalize.norm_reward is False


@pytest.mark.parametrize("algo", ["PPO", "DQN"])
def test_train_save_and_play_a_folder_without_unpickling(algo, tmp_path, monkeypatch) -> None:
    """bandit_gym.rl.train -> TrainedPolicy.save -> SB3Agent(folder): played without the opt-in and without any
    unpickling, the same actions as the model in memory with its statistics."""
    policy = train("ThresholdBandit-v0", algo, total_timesteps=256, seed=0, num_envs=2 if algo == "PPO" else 1,
                   env_kwargs={"horizon": HORIZON})
    folder = policy.save(tmp_path / algo)
    assert {"model.zip", "vecnormalize.npz", "metadata.json"} <= {path.name for path in folder.iterdir()}
    want = _episode_actions(SB3Agent(policy.model, normalize=policy.normalize))
    agents = SB3Agent(str(folder)), SB3Agent(folder / "model.zip")
    with no_unpickling(monkeypatch):  # the files are read here (played below: numba's cache is a pickle)
        for agent in agents:
            agent._load()
        assert type(load(folder).model).__name__ == algo
    assert [_episode_actions(agent) for agent in agents] == [want, want]
    assert agents[0].params()["trust_pickles"] is False


def test_an_a2c_zip_an_armwise_folder_and_the_shipped_policies_play_without_unpickling(tmp_path, monkeypatch) -> None:
    """A2C stores optimizer_class=RMSprop in its pickled policy_kwargs; the arm-wise policy is a zip of
    bandit_gym.rl.armwise.ArmwisePolicy (train_armwise's candidates); ArmwisePPO reads its .npz."""
    from bandit_gym.rl.armwise import ArmwisePolicy

    env = gym.make("ThresholdBandit-v0", horizon=HORIZON)
    a2c = A2C("MultiInputPolicy", env, seed=0, device="cpu")
    a2c.save(tmp_path / "a2c.zip")
    venv = make_vec_env("ThresholdBandit-v0", 2, normalize=None, horizon=HORIZON)
    armwise = TrainedPolicy(PPO(ArmwisePolicy, venv, seed=0, device="cpu")).save(tmp_path / "armwise")
    want = [_episode_actions(SB3Agent(a2c)), _episode_actions(SB3Agent(load(armwise, trust_pickles=True)))]
    agents = SB3Agent(tmp_path / "a2c.zip", algo="A2C"), SB3Agent(armwise), ArmwisePPO("threshold")
    with no_unpickling(monkeypatch):
        for agent in agents:
            agent._load()
        assert load_model(tmp_path / "a2c.zip", "A2C").policy.optimizer_class.__name__ == "RMSprop"
        assert isinstance(load(armwise).model.policy, ArmwisePolicy)
    assert [_episode_actions(agent) for agent in agents[:2]] == want
    assert len(_episode_actions(agents[2])) == HORIZON


# ----------------------------------------------------------------------------------------------- mistakes
def test_a_policy_trained_on_another_env_is_refused_naming_the_policy(trained) -> None:
    """Another env of the family (K = 4 arms, not 3) is refused naming the policy and its observations; an env of
    another family lacks the entries the policy reads, which the agent's observation checks name."""
    _, folder = trained
    obs, _ = gym.make("ThresholdBandit-Delivery-v0", horizon=HORIZON).reset(seed=0)
    with pytest.raises(ValueError, match=r"policy='.*ppo': the model was trained on observations .* this env "
                                         r"gives .*'counts': \(4,\).*train it on this env id and K"):
        SB3Agent(folder).act(obs)
    obs, _ = gym.make("ThresholdingBandit-Tao2019Setup1-v0").reset(seed=0)
    with pytest.raises(ValueError, match=r"obs lacks the keys \['level_exceed', 'level_trials'\]"):
        SB3Agent(folder).act(obs)


def test_an_algo_other_than_the_one_that_saved_the_zip_is_named(trained, tmp_path) -> None:
    policy, folder = trained
    policy.model.save(tmp_path / "ppo.zip")
    obs = _obs()
    with pytest.raises(ValueError, match=r"policy='.*ppo\.zip' could not be loaded as a DQN \(it was saved by PPO"
                                         r".*pass algo='PPO'"):
        SB3Agent(tmp_path / "ppo.zip", algo="DQN").act(obs)
    old = _copy(folder, tmp_path / "no-metadata", ("model.zip", "vecnormalize.npz"))  # saved before metadata.json
    with pytest.raises(ValueError, match=r"could not be loaded as a DQN \(it was saved by PPO.*algo='PPO'"):
        SB3Agent(old, algo="DQN").act(obs)
    with pytest.raises(ValueError, match=r"folder='.*no-metadata'.* could not be loaded as a A2C \(it was saved by "
                                         r"PPO"):
        load(old, algo="A2C")
    with pytest.raises(ValueError, match=r"algo='SAC' is not allowed"):
        load_model(tmp_path / "ppo.zip", algo="SAC")


def test_a_policy_file_that_is_not_a_zip_is_named(tmp_path) -> None:
    folder = tmp_path / "text"
    folder.mkdir()
    (folder / "model.zip").write_text("not a model\n")
    with pytest.raises(ValueError, match=r"policy='.*text' \(.*model\.zip\) is not a zip file") as error:
        SB3Agent(folder).act(_obs())
    assert "algo=" not in str(error.value)  # the file is the problem, not the SB3 class
    with pytest.raises(ValueError, match=r"policy='.*model\.zip' is not a zip file"):
        SB3Agent(folder / "model.zip", trust_pickles=True).act(_obs())
    with pytest.raises(ValueError, match=r"folder='.*text' \(.*\) is not a zip file"):
        load(folder)
    with zipfile.ZipFile(folder / "empty.zip", "w") as archive:
        archive.writestr("other", "x")
    with pytest.raises(ValueError, match=r"path='.*empty\.zip' holds no 'data' entry"):
        load_model(folder / "empty.zip")


def test_a_vecnormalize_file_that_is_not_one_is_named(trained, tmp_path) -> None:
    policy, _ = trained
    obs = _obs()
    (tmp_path / "dict.pkl").write_bytes(pickle.dumps({"mean": 0}))
    (tmp_path / "text.pkl").write_text("not a pickle\n")
    np.savez(tmp_path / "other.npz", x=np.zeros(3))
    with pytest.raises(ValueError, match=r"normalize='.*dict\.pkl' holds a dict, not the VecNormalize statistics"):
        SB3Agent(policy.model, normalize=tmp_path / "dict.pkl", trust_pickles=True).act(obs)
    with pytest.raises(ValueError, match=r"normalize='.*text\.pkl' is not VecNormalize statistics"):
        SB3Agent(policy.model, normalize=str(tmp_path / "text.pkl"), trust_pickles=True).act(obs)
    with pytest.raises(ValueError, match=r"normalize='.*text\.pkl' is not an \.npz.*trust_pickles=True"):
        SB3Agent(policy.model, normalize=str(tmp_path / "text.pkl")).act(obs)
    with pytest.raises(ValueError, match=r"normalize='.*other\.npz' is not observation statistics written by"):
        SB3Agent(policy.model, normalize=tmp_path / "other.npz").act(obs)
    with pytest.raises(ValueError, match=r"path='.*dict\.pkl' .*trust_pickles=True"):
        load_normalize(tmp_path / "dict.pkl")
    with pytest.raises(TypeError, match=r"normalize must be None .*, a VecNormalize, or the path of its \.npz"):
        SB3Agent(policy.model, normalize=3)


def test_trust_pickles_must_be_a_bool(trained) -> None:
    _, folder = trained
    with pytest.raises(TypeError, match=r"trust_pickles must be True or False"):
        SB3Agent(folder, trust_pickles="yes")
    with pytest.raises(TypeError, match=r"trust_pickles must be True or False"):
        load(folder, trust_pickles=1)
    with pytest.raises(TypeError, match=r"trust_pickles must be True or False"):
        rl.load_normalize(folder / "vecnormalize.npz", trust_pickles=None)


def test_level_exceed_as_a_scalar_is_named_not_an_index_error(trained) -> None:
    policy, _ = trained
    obs = {**_obs(), "level_exceed": np.float32(0.0)}
    for agent in (SB3Agent(policy.model, normalize=policy.normalize), ArmwisePPO("threshold")):
        with pytest.raises((ValueError, TypeError), match=r"obs\['level_exceed'\]"):
            agent.act(obs)


def test_an_armwise_zip_saved_before_the_rl_package_still_loads_without_unpickling(tmp_path, monkeypatch) -> None:
    """The arm-wise policy moved from ``bandit_gym.armwise`` to ``bandit_gym.rl.armwise``: a zip that names the
    old module (as the files saved by 0.2 do) is read as the new one, and plays the same actions."""
    import zipfile

    from bandit_gym.rl.armwise import ArmwisePolicy

    venv = make_vec_env("ThresholdBandit-v0", 2, normalize=None, horizon=HORIZON)
    new = PPO(ArmwisePolicy, venv, seed=0, device="cpu")
    new.save(tmp_path / "new.zip")
    with zipfile.ZipFile(tmp_path / "new.zip") as source, zipfile.ZipFile(tmp_path / "old.zip", "w") as target:
        for item in source.infolist():
            raw = source.read(item)
            if item.filename == "data":
                assert b'"bandit_gym.rl.armwise"' in raw
                raw = raw.replace(b'"bandit_gym.rl.armwise"', b'"bandit_gym.armwise"')
            target.writestr(item, raw)
    with no_unpickling(monkeypatch):
        old = load_model(tmp_path / "old.zip")
    assert isinstance(old.policy, ArmwisePolicy)
    assert _episode_actions(SB3Agent(old)) == _episode_actions(SB3Agent(new))
