r"""An arm-wise policy for stable-baselines3: one shared network applied to every arm's statistics, so that one
set of weights runs on any number of arms \(K\) and any budget \(T\), and treats the arms alike.

```python
from stable_baselines3 import PPO
from bandit_gym.rl.armwise import ArmwisePolicy
model = PPO(ArmwisePolicy, venv)        # venv: an SB3 VecEnv of a bandit_gym env with a Discrete(K) action
```

The features (``arm_features``) are raw statistics, scaled to be comparable across \(K\) and \(T\), with no index of
a designed algorithm among them. For arm \(i\), with \(n_i\) its pulls, \(t = \sum_i n_i\) the pulls so far and
\(T = t + \text{budget\_left}\) the episode's budget (horizon):

- every family: \(n_i / T\), \(\ln(1 + n_i) / \ln(1 + T)\), \(\mathbb{1}\{n_i = 0\}\), the empirical mean \(\mu_i\)
  (0 before the first pull), the signed distance \(\mu_i - c\) to the family's threshold \(c\), and the episode's
  globals repeated on every arm: \(\text{budget\_left} / T\), \(\ln(1 + T) / \ln(1 + 10^5)\), \(\ln K / \ln 10^3\);
- thresholding: \(c = \theta\), globals \(\theta\) and \(\epsilon\);
- best arm, top \(K\), correlated arms: \(c\) = the midpoint of the \(m\)-th and \((m+1)\)-th largest empirical means
  of the pulled arms (the empirical boundary of the answer set), globals \(m / K\) and \(\epsilon\);
- threshold bandit: \(c\) = the empirical mean over all arms, and per arm the level statistics at the round's
  threshold \(c_t\): \(F_i(c_t)\) estimated as \(\text{exceed} / \text{trials}\) (0 without trials),
  \(\text{trials} / T\) and \(\ln(1 + \text{trials}) / \ln(1 + T)\); global \(c_t / m\);
- multi-armed bandit: \(c\) = the largest empirical mean.

Means on an unknown scale (Gaussian rewards: the correlated-arms envs' \(\mathcal{N}(0, 1)\) draws, traffic speeds
near 58 mph) are read with ``standardize=True`` (``ArmFeatures``,
``ArmwisePolicy(features_extractor_kwargs={"standardize": True})``): the columns \(\mu_i\) and \(\mu_i - c\) become
\((\mu_i - \operatorname{mean}_j \mu_j) / s\) and \((\mu_i - c) / s\), with \(\operatorname{mean}_j \mu_j\) and
\(s\) the mean and standard deviation of the pulled arms' empirical means (\(s = 1\) while fewer than two arms are
pulled or they all agree), so that the features do not change when every reward is shifted or multiplied by a
positive constant. Without it (the default) the means are read as they are, which suits rewards in \([0, 1]\).

A policy trained on one \(K\) meets the columns \(n_i / T\), \(\ln(1 + n_i) / \ln(1 + T)\) and \(\ln K\) at other
values on another \(K\) (at the even share \(n_i = T / K\), \(n_i / T = 1 / K\)), values it never saw in training.
With ``k_invariant=True`` (``features_extractor_kwargs={"k_invariant": True}``) the counts are read relative to the
even share \(s = T / K\): \(n_i / (n_i + s)\) (1/2 at the share) and \(\ln(1 + n_i) / \ln(1 + s)\), the same for
the threshold bandit's trials; the global \(\ln(1 + T)\) becomes \(\ln(1 + s) / \ln(1 + 10^5)\), and \(\ln K\) is
dropped. Two instances with the same budget per arm and the same law of the means then give features with the
same law, whatever \(K\).

The network (``ArmwiseNetwork``): \(h_i = \phi(x_i)\) (a shared MLP), \(g = \operatorname{mean}_i h_i\); the logit
of arm \(i\) is \(\rho([h_i, g])\) (one per arm: the policy is a categorical over the arms) and the value is
\(v([\operatorname{mean}_i h_i, \max_i h_i])\) (pooled over the arms). Permuting the arms permutes the logits and
leaves the value unchanged. The answer of a pure-exploration env is the empirical rule (``EmpiricalAnswerVector``);
the policy only chooses arms. Observations are not normalised by ``VecNormalize`` (its statistics are per entry,
tied to one \(K\)): the features are scaled here.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path
from typing import Any

import numpy as np

try:
    import torch as th
    from gymnasium import spaces
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
    from torch import nn
except ImportError as error:  # pragma: no cover - the rl extra is missing
    raise ImportError('bandit_gym.rl.armwise needs stable-baselines3: pip install "pure-exploration-gym[rl]"') \
        from error

from bandit_gym import _weights_file as weights_file
from bandit_gym.families import CONTRACTS, Family, family_of
from bandit_gym.families.threshold import LEVEL_KEYS

NUM_FEATURES = {Family.THRESHOLDING: 10, Family.BEST_ARM: 10, Family.TOP_K: 10, Family.THRESHOLD: 12,
                Family.MULTI_ARMED: 8}
"""Features per arm, by family (``arm_features``)."""


def _checked_family(keys: Any) -> Family:
    """The family of a bandit_gym observation (``bandit_gym.families.family_of``), whose keys must include the
    ones the features read (every key of the family's contract but the last feedback)."""
    keys = set(keys)
    family = family_of(keys)
    needed = [key for key in CONTRACTS[family].agent_keys if not key.startswith("last_")]
    if family is Family.THRESHOLD:
        needed += LEVEL_KEYS
    if not set(needed) <= keys:
        raise ValueError(f"not a bandit_gym observation: keys {sorted(keys)}")
    return family


def _boundary(means: th.Tensor, pulled: th.Tensor, m: th.Tensor) -> th.Tensor:
    """The midpoint of the m-th and (m+1)-th largest empirical means among the pulled arms, ``(B, 1)`` (the
    m-th largest when exactly m arms are pulled; 0 when fewer are)."""
    ranked = th.where(pulled, means, th.full_like(means, -math.inf)).sort(dim=1, descending=True).values
    k = means.shape[1]
    index = m.long().clamp(1, k - 1)
    upper = ranked.gather(1, index - 1)
    lower = ranked.gather(1, index)
    lower = th.where(th.isfinite(lower), lower, upper)
    mid = (upper + lower) / 2
    return th.where(th.isfinite(mid), mid, th.zeros_like(mid))


def _standardized(means: th.Tensor, pulled: th.Tensor, centre: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
    """``(mu_i - mean_j mu_j) / s`` and ``(mu_i - c) / s`` over the pulled arms (0 for the others), ``s`` their
    standard deviation (1 while fewer than two arms are pulled or their means agree)."""
    weight = pulled.float()
    n = weight.sum(dim=1, keepdim=True)
    mean = (means * weight).sum(dim=1, keepdim=True) / n.clamp(min=1.0)
    var = (((means - mean) ** 2) * weight).sum(dim=1, keepdim=True) / n.clamp(min=1.0)
    spread = th.where((n >= 2) & (var > 0), var.clamp(min=1e-30).sqrt(), th.ones_like(var))
    zero = th.zeros_like(means)
    return th.where(pulled, (means - mean) / spread, zero), th.where(pulled, (means - centre) / spread, zero)


def _pull_scales(counts: th.Tensor, total: th.Tensor, k_invariant: bool) -> list[th.Tensor]:
    """The two columns of a count ``n`` (pulls of an arm, or its trials at a level): ``n / T`` and
    ``ln(1 + n) / ln(1 + T)``, or with ``k_invariant`` ``n / (n + T / K)`` and ``ln(1 + n) / ln(1 + T / K)``
    (relative to the even share ``T / K``)."""
    if not k_invariant:
        return [counts / total, th.log1p(counts) / th.log1p(total)]
    share = total / counts.shape[1]
    return [counts / (counts + share), th.log1p(counts) / th.log1p(share)]


def arm_features(obs: dict[str, th.Tensor], standardize: bool = False, k_invariant: bool = False) -> th.Tensor:
    """The per-arm features of a batch of observations, ``(B, K, F)`` (see the module's docstring);
    ``standardize`` reads the means relative to the spread of the pulled arms' means; ``k_invariant`` reads the
    counts relative to the even share ``T / K`` and drops the global ``ln K`` (one column fewer)."""
    family = _checked_family(obs)
    counts = obs["counts"].float()
    b, k = counts.shape
    pulls = counts.sum(dim=1, keepdim=True)
    total = (pulls + obs["budget_left"].float()).clamp(min=1.0)
    pulled = counts > 0
    means = th.where(pulled, obs["means"].float(), th.zeros_like(counts))
    glob = [obs["budget_left"].float() / total]
    if k_invariant:
        glob += [th.log1p(total / k) / math.log1p(1e5)]
    else:
        glob += [th.log1p(total) / math.log1p(1e5), th.full((b, 1), math.log(k) / math.log(1e3), device=counts.device)]
    extra: list[th.Tensor] = []
    if family is Family.THRESHOLDING:
        centre = obs["threshold"].float()
        glob += [obs["threshold"].float(), obs["epsilon"].float().clamp(max=1.0)]
    elif family in (Family.BEST_ARM, Family.TOP_K):
        centre = _boundary(means, pulled, obs["m"].float())
        glob += [obs["m"].float() / k, obs["epsilon"].float().clamp(max=1.0)]
    elif family is Family.THRESHOLD:
        levels = obs["level_exceed"].shape[1] // k
        level = obs["threshold"].long().clamp(1, levels) - 1  # c_t in 1..m
        exceed = obs["level_exceed"].float().view(b, k, levels)
        trials = obs["level_trials"].float().view(b, k, levels)
        at = level.view(b, 1, 1).expand(b, k, 1)
        exceed_c, trials_c = exceed.gather(2, at).squeeze(2), trials.gather(2, at).squeeze(2)
        survival = th.where(trials_c > 0, exceed_c / trials_c.clamp(min=1.0), th.zeros_like(trials_c))
        extra = [survival, *_pull_scales(trials_c, total, k_invariant)]
        centre = (means * counts).sum(dim=1, keepdim=True) / pulls.clamp(min=1.0)
        glob += [obs["threshold"].float() / levels]
    else:
        centre = th.where(pulled, means, th.full_like(means, -math.inf)).max(dim=1, keepdim=True).values
        centre = th.where(th.isfinite(centre), centre, th.zeros_like(centre))
    level, distance = _standardized(means, pulled, centre) if standardize else (means, means - centre)
    per_arm = [*_pull_scales(counts, total, k_invariant), (~pulled).float(), level, distance, *extra]
    columns = per_arm + [g.expand(b, k) for g in glob]
    return th.stack(columns, dim=2)


class ArmFeatures(BaseFeaturesExtractor):
    """``arm_features`` flattened to ``(B, K F)`` (SB3 passes features as one vector per observation); no
    parameters, so the same extractor serves any K. ``standardize``, ``k_invariant``: see ``arm_features``."""

    def __init__(self, observation_space: spaces.Dict, standardize: bool = False, k_invariant: bool = False) -> None:
        for name, value in (("standardize", standardize), ("k_invariant", k_invariant)):
            if not isinstance(value, bool):
                raise TypeError(f"{name} must be True or False, got {value!r}")
        family = _checked_family(observation_space.spaces)
        k = int(np.prod(observation_space["counts"].shape or (0,)))
        self.num_features = NUM_FEATURES[family] - int(k_invariant)
        self.standardize = standardize
        self.k_invariant = k_invariant
        super().__init__(observation_space, features_dim=k * self.num_features)

    def forward(self, observations: dict[str, th.Tensor]) -> th.Tensor:
        return arm_features(observations, self.standardize, self.k_invariant).flatten(1)


def _mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in itertools.pairwise(sizes):
        layers += [nn.Linear(a, b), nn.Tanh()]
    return nn.Sequential(*layers[:-1])  # no activation after the last layer


class ArmwiseNetwork(nn.Module):
    """The shared per-arm network: ``forward_actor`` gives one logit per arm ``(B, K)``, ``forward_critic`` a
    pooled latent ``(B, hidden)`` for SB3's value head. ``latent_dim_pi`` is K (the logits are the action's
    distribution parameters: the policy's ``action_net`` is the identity)."""

    def __init__(self, num_features: int, num_arms: int, hidden: int = 64) -> None:
        super().__init__()
        self.num_features = num_features
        self.phi = nn.Sequential(_mlp([num_features, hidden, hidden]), nn.Tanh())
        self.rho = _mlp([2 * hidden, hidden, 1])
        self.critic = nn.Sequential(_mlp([2 * hidden, hidden]), nn.Tanh())
        self.latent_dim_pi = num_arms
        self.latent_dim_vf = hidden

    def embed(self, features: th.Tensor) -> th.Tensor:
        r"""\(h_i = \phi(x_i)\), ``(B, K, hidden)``."""
        return self.phi(features.view(features.shape[0], -1, self.num_features))

    def logits(self, h: th.Tensor) -> th.Tensor:
        r"""\(\rho([h_i, \operatorname{mean}_j h_j])\) for every arm, ``(B, K)``."""
        g = h.mean(dim=1, keepdim=True).expand_as(h)
        return self.rho(th.cat([h, g], dim=2)).squeeze(2)

    def pooled(self, h: th.Tensor) -> th.Tensor:
        r"""The value head's latent \(v([\operatorname{mean}_i h_i, \max_i h_i])\), ``(B, hidden)``."""
        return self.critic(th.cat([h.mean(dim=1), h.max(dim=1).values], dim=1))

    def forward_actor(self, features: th.Tensor) -> th.Tensor:
        return self.logits(self.embed(features))

    def forward_critic(self, features: th.Tensor) -> th.Tensor:
        return self.pooled(self.embed(features))

    def forward(self, features: th.Tensor) -> tuple[th.Tensor, th.Tensor]:
        h = self.embed(features)  # once for both heads (SB3 calls this in every rollout step and update)
        return self.logits(h), self.pooled(h)


class ArmwisePolicy(ActorCriticPolicy):
    """SB3's actor-critic policy with ``ArmFeatures`` and ``ArmwiseNetwork`` (``hidden`` units, default 64):
    one logit per arm from one shared network, a value pooled over the arms. For a ``Discrete(K)`` action (the
    threshold and multi-armed bandits, or a pure-exploration env through ``EmpiricalAnswerVector``). Its
    weights do not depend on K: ``for_spaces`` builds the same policy for another K (or budget)."""

    def __init__(self, observation_space: spaces.Dict, action_space: spaces.Space, lr_schedule: Any,
                 hidden: int = 64, **kwargs: Any) -> None:
        if not isinstance(action_space, spaces.Discrete):
            raise ValueError(f"ArmwisePolicy chooses an arm: it needs a Discrete(K) action, got {action_space}; "
                             "wrap a pure-exploration env in EmpiricalAnswerVector")
        k = int(np.prod(observation_space["counts"].shape or (0,)))
        if int(action_space.n) != k:
            raise ValueError(f"ArmwisePolicy has one logit per arm: the action {action_space} must have K = {k} "
                             "choices (no stop action)")
        self.hidden = int(hidden)
        kwargs.setdefault("features_extractor_class", ArmFeatures)
        super().__init__(observation_space, action_space, lr_schedule, **kwargs)

    def _build_mlp_extractor(self) -> None:
        extractor: Any = self.features_extractor
        network: Any = ArmwiseNetwork(extractor.num_features, int(self.action_space.n),  # type: ignore[attr-defined]
                                      self.hidden)
        self.mlp_extractor = network

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the network's output is the logits
        network: Any = self.mlp_extractor
        last = network.rho[-1]
        nn.init.orthogonal_(last.weight, gain=0.01)  # small initial logits, as SB3's action_net
        nn.init.zeros_(last.bias)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1),  # type: ignore[call-arg]
                                              **self.optimizer_kwargs)

    def _get_constructor_parameters(self) -> dict[str, Any]:
        return {**super()._get_constructor_parameters(), "hidden": self.hidden}

    def for_spaces(self, observation_space: spaces.Dict, action_space: spaces.Space) -> ArmwisePolicy:
        """The same policy (same weights) for another env's spaces: another K, another budget."""
        params = self._get_constructor_parameters()
        params.update(observation_space=observation_space, action_space=action_space,
                      lr_schedule=lambda _: 0.0)
        with th.random.fork_rng(devices=[]):  # the fresh initialisation, overwritten, leaves torch's generator alone
            policy = type(self)(**params)
        policy.load_state_dict(self.state_dict())
        return policy.to(self.device)


def logits_and_value(policy: ArmwisePolicy, obs: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The logits ``(B, K)`` and values ``(B,)`` of a batch of observations (numpy in, numpy out)."""
    tensors, _ = policy.obs_to_tensor(obs)
    with th.no_grad():
        features = policy.extract_features(tensors)
        logits, latent = policy.mlp_extractor(features)
        value = policy.value_net(latent)
    return logits.cpu().numpy(), value.squeeze(1).cpu().numpy()


def save_weights(policy: ArmwisePolicy, path: str | Path, **meta: Any) -> Path:
    """Write the policy's weights (float32 arrays, no optimiser state) and what rebuilds it (the hidden size,
    ``standardize``, ``k_invariant``, the observation entries' shapes it was trained on, and ``meta``) to one
    ``.npz`` (``bandit_gym._weights_file``'s format); read it with ``load_weights``. About 90 kB for the default
    hidden size, without pickles."""
    extractor: Any = policy.features_extractor
    shapes = {key: list(box.shape) for key, box in policy.observation_space.spaces.items()}  # type: ignore[attr-defined]
    header = {"hidden": policy.hidden, "standardize": extractor.standardize, "k_invariant": extractor.k_invariant,
              "shapes": shapes, **meta}
    arrays = {key: value.detach().cpu().numpy() for key, value in policy.state_dict().items()}
    return weights_file.write(path, header, arrays)


def load_weights(path: str | Path) -> tuple[ArmwisePolicy, dict[str, Any]]:
    """The policy written by ``save_weights`` (for the observation shapes it was trained on; ``SB3Agent``
    rebuilds it for others) and its header."""
    arrays, header = weights_file.read(path)
    state = {key: th.from_numpy(value) for key, value in arrays.items()}
    space = spaces.Dict({key: spaces.Box(-np.inf, np.inf, shape=tuple(shape), dtype=np.float32)
                         for key, shape in header["shapes"].items()})
    k = int(np.prod(header["shapes"]["counts"]))
    with th.random.fork_rng(devices=[]):  # as in ``for_spaces``
        policy = ArmwisePolicy(space, spaces.Discrete(k), lambda _: 0.0, hidden=header["hidden"],
                               features_extractor_kwargs={"standardize": header["standardize"],
                                                          "k_invariant": header.get("k_invariant", False)})
    policy.load_state_dict(state)
    policy.set_training_mode(False)
    return policy, header
