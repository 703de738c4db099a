package dev.privagg.job;

import dev.privagg.optimizer.ServerOptimizer;

/**
 * The latest model the combiner released, its round, and the server optimizer's state after it
 * (operator-internal: never published).
 */
public class ModelState {
  public float[] model;
  public long round;

  /** Null in state from versions without server optimizers. */
  public ServerOptimizer.State optimizer;

  public ModelState() {}

  public ModelState(float[] model, long round) {
    this(model, round, null);
  }

  public ModelState(float[] model, long round, ServerOptimizer.State optimizer) {
    this.model = model;
    this.round = round;
    this.optimizer = optimizer;
  }
}
