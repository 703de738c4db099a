"""Privacy a client adds itself, before its update leaves: sample-level DP-SGD for PyTorch
(:mod:`.dp_sgd`), local DP filters (:mod:`.local_dp`), their accounting (:mod:`.accounting`)
and secure noise (:mod:`.randomness`). It composes with the job's client-level guarantee on what
the server releases; it does not replace it (docs/client-privacy.md)."""
