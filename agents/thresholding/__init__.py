"""Agents for the thresholding bandit (tao2019). LSA, APT, UCBE and Opt-KG arrive with the tao2019 issue."""

__all__: list[str] = []
