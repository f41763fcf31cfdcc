"""Bayesian agents of best-arm identification with correlated arms (hoffman2014): work in progress (issue 7).
So far: the Gaussian posterior over the arms' means that they share (:mod:`._posterior`)."""
