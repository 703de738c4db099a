package dev.privagg.cli;

import dev.privagg.sim.NumberText;

/** Number formatting for people, as the report files write numbers ({@link NumberText}). */
final class Text {
  private Text() {}

  static String number(double value) {
    return NumberText.of(value);
  }
}
