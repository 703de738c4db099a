package dev.privagg.job;

/** The latest model the combiner released, and its round. */
public class ModelState {
  public float[] model;
  public long round;

  public ModelState() {}

  ModelState(float[] model, long round) {
    this.model = model;
    this.round = round;
  }
}
