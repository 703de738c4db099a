package dev.privagg.correlated;

/** Which reduction of the per-round squared errors of the prefix sums a strategy minimizes. */
public enum ErrorKind {
  /** The largest per-round squared error, which for Toeplitz matrices is the last round's. */
  MAX,
  /** The mean of the per-round squared errors. */
  MEAN
}
