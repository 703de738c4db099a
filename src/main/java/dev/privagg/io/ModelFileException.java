package dev.privagg.io;

/**
 * A model file (safetensors, npz) that cannot be read as float32 tensors: the message names the
 * file, what was wrong and, where there is one, what privagg accepts instead.
 */
public final class ModelFileException extends IllegalArgumentException {
  /** A refusal of {@code file} for {@code problem}. */
  public ModelFileException(String file, String problem) {
    super(file + ": " + problem);
  }
}
