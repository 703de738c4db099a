package dev.privagg.spec;

/** A job spec that cannot run: the message names the key, what was wrong and how to fix it. */
public final class SpecException extends IllegalArgumentException {
  /** A refusal for {@code key} (a dotted path such as {@code privacy.clipNorm}). */
  public SpecException(String source, String key, String problem) {
    super(source + ": " + key + " " + problem);
  }
}
