package dev.privagg.cli;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * A duration option in the job spec's syntax (500ms, 30s, 2m, 1h), so that one syntax works
 * everywhere; ISO-8601 (PT30S) is still accepted.
 */
final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
  private static final Pattern SHORT = Pattern.compile("(\\d{1,12})(ms|s|m|h)");

  @Override
  public Duration convert(String text) {
    String trimmed = text.trim();
    Matcher m = SHORT.matcher(trimmed);
    if (m.matches()) {
      long n = Long.parseLong(m.group(1));
      return switch (m.group(2)) {
        case "ms" -> Duration.ofMillis(n);
        case "s" -> Duration.ofSeconds(n);
        case "m" -> Duration.ofMinutes(n);
        default -> Duration.ofHours(n);
      };
    }
    try {
      return Duration.parse(trimmed);
    } catch (DateTimeParseException e) {
      throw new CommandLine.TypeConversionException(
          "'" + text + "' is not a duration: use 500ms, 30s, 2m or 1h (as in job specs)");
    }
  }
}
