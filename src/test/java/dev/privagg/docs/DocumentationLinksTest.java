package dev.privagg.docs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.cli.Main;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import picocli.CommandLine;

/**
 * Keeps the documentation honest. Every relative link in the README, the docs pages and the other
 * markdown files of the repository leads to a file that exists, and a link with an anchor to a
 * heading of that markdown file whose GitHub slug is the anchor. Every {@code ./privagg} command
 * shown in a fenced code block of the README or a docs page parses with the CLI's own picocli
 * command line (parsed only, never run).
 */
class DocumentationLinksTest {
  private static final Path ROOT = Path.of("").toAbsolutePath();

  /** Directories whose markdown is checked for links, besides the README. */
  private static final List<String> LINKED_DIRS =
      List.of("docs", "clients", "examples", "deploy", "data", "bench", "schemas", "jobs");

  private static final Pattern FENCE = Pattern.compile("^\\s*(```|~~~)");
  private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");
  private static final Pattern INLINE_CODE = Pattern.compile("`+[^`]*?`+");
  private static final Pattern LINK =
      Pattern.compile(
          "!?\\[((?:[^\\[\\]]++|\\[[^\\[\\]]*+\\])*+)\\]\\(\\s*([^)\\s]+)(?:\\s+\"[^\"]*\")?\\)");
  private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");
  private static final Pattern PLACEHOLDER = Pattern.compile("<[A-Za-z][A-Za-z0-9_.-]*>");

  /** A {@code ./privagg} command as shown: where, its text, and its arguments after the tool. */
  private record Shown(Path page, int line, String text, List<String> args) {
    String where() {
      return ROOT.relativize(page) + ":" + line;
    }
  }

  @Test
  void everyRelativeLink_leadsToAnExistingFile_andEveryAnchorToAHeading() throws IOException {
    List<Path> pages = markdownPages(true);
    Map<Path, Set<String>> anchors = new HashMap<>();
    List<String> broken = new ArrayList<>();
    int links = 0;
    for (Path page : pages) {
      String text = withoutCode(Files.readString(page));
      Matcher m = LINK.matcher(text);
      while (m.find()) {
        String target = m.group(2);
        if (SCHEME.matcher(target).find()) {
          continue; // http:, https:, mailto: ... are not files of this repository
        }
        links++;
        String where = ROOT.relativize(page) + ":" + lineOf(text, m.start()) + ": " + m.group();
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved =
            file.isEmpty()
                ? page
                : (file.startsWith("/")
                        ? ROOT.resolve(file.substring(1))
                        : page.resolveSibling(file))
                    .normalize();
        if (!resolved.startsWith(ROOT)) {
          broken.add(where + ": leads outside the repository");
        } else if (!Files.exists(resolved)) {
          broken.add(where + ": no file " + ROOT.relativize(resolved));
        } else if (anchor != null) {
          if (!resolved.toString().endsWith(".md")) {
            broken.add(where + ": an anchor into a file that is not markdown");
          } else {
            Set<String> known = anchors.computeIfAbsent(resolved, DocumentationLinksTest::anchors);
            if (!known.contains(anchor)) {
              broken.add(
                  where
                      + ": no heading of "
                      + ROOT.relativize(resolved)
                      + " has the slug "
                      + anchor);
            }
          }
        }
      }
    }
    System.out.printf("checked %d relative links in %d markdown files%n", links, pages.size());
    broken.forEach(b -> System.out.println("broken link: " + b));
    assertThat(pages).contains(ROOT.resolve("README.md"), ROOT.resolve("docs/design.md"));
    assertThat(links).as("links found").isGreaterThan(20);
    assertThat(broken).as("broken links").isEmpty();
  }

  @Test
  void everyPrivaggCommandInACodeBlock_parsesWithTheCli() throws IOException {
    List<Shown> commands = new ArrayList<>();
    for (Path page : markdownPages(false)) {
      commands.addAll(shownCommands(page));
    }
    List<String> failed = new ArrayList<>();
    for (Shown shown : commands) {
      try {
        new CommandLine(new Main()).parseArgs(shown.args().toArray(String[]::new));
      } catch (CommandLine.ParameterException e) {
        failed.add(shown.where() + ": " + shown.text() + "\n    -> " + e.getMessage());
      }
    }
    System.out.printf("parsed %d ./privagg commands%n", commands.size());
    failed.forEach(f -> System.out.println("does not parse: " + f));
    assertThat(commands)
        .as("./privagg commands found")
        .extracting(Shown::args)
        .contains(List.of("demo"));
    assertThat(failed).as("./privagg commands that do not parse").isEmpty();
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "Hostile input: what a record can cost | hostile-input-what-a-record-can-cost",
        "State per training job (keyed by job id) | state-per-training-job-keyed-by-job-id",
        "The privacy core (`dev.privagg.privacy`) | the-privacy-core-devprivaggprivacy",
        "Any language: the wire format | any-language-the-wire-format",
        "Failures, replays and the ledger | failures-replays-and-the-ledger",
        "The pipeline: `privagg bench` | the-pipeline-privagg-bench",
        "See [design](design.md) | see-design"
      })
  void slug_isGitHubs(String heading, String slug) {
    assertThat(slug(heading.strip())).isEqualTo(slug.strip());
  }

  @Test
  void shellWords_dropCommentsRedirectionsAndPlaceholders() {
    assertThat(
            shellWords(
                "./privagg consume --spec 'my spec.yaml' --until-round <round> --save \"out dir\""
                    + " 2>&1 | tee log # comment"))
        .containsExactly(
            "./privagg",
            "consume",
            "--spec",
            "my spec.yaml",
            "--until-round",
            "1",
            "--save",
            "out dir");
    assertThat(shellWords("./privagg jobs   # JOB_ID  RUNNING"))
        .containsExactly("./privagg", "jobs");
  }

  /**
   * README.md and every markdown file under the checked directories, hidden and build ones aside.
   */
  private static List<Path> markdownPages(boolean everyDirectory) throws IOException {
    List<Path> pages = new ArrayList<>();
    pages.add(ROOT.resolve("README.md"));
    for (String dir : everyDirectory ? LINKED_DIRS : List.of("docs")) {
      Path start = ROOT.resolve(dir);
      if (!Files.isDirectory(start)) {
        continue;
      }
      Files.walkFileTree(
          start,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
              String name = d.getFileName().toString();
              boolean skip =
                  !d.equals(start)
                      && (name.startsWith(".")
                          || name.equals("target")
                          || name.equals("__pycache__")
                          || name.endsWith(".egg-info")
                          || Files.exists(d.resolve("pyvenv.cfg")));
              return skip ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
              if (file.toString().endsWith(".md")) {
                pages.add(file);
              }
              return FileVisitResult.CONTINUE;
            }
          });
    }
    return pages;
  }

  /** The page with fenced code blocks blanked (lines kept) and inline code spans neutralised. */
  private static String withoutCode(String markdown) {
    StringBuilder out = new StringBuilder();
    boolean inFence = false;
    for (String line : markdown.split("\n", -1)) {
      if (FENCE.matcher(line).find()) {
        inFence = !inFence;
        out.append('\n');
      } else {
        out.append(inFence ? "" : line).append('\n');
      }
    }
    return INLINE_CODE.matcher(out).replaceAll("code");
  }

  private static int lineOf(String text, int offset) {
    int line = 1;
    for (int i = 0; i < offset; i++) {
      if (text.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }

  /** The GitHub anchors of a markdown file's headings, duplicates numbered as GitHub does. */
  private static Set<String> anchors(Path markdown) {
    Set<String> anchors = new LinkedHashSet<>();
    Map<String, Integer> seen = new HashMap<>();
    boolean inFence = false;
    List<String> lines;
    try {
      lines = Files.readAllLines(markdown);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
    for (String line : lines) {
      if (FENCE.matcher(line).find()) {
        inFence = !inFence;
        continue;
      }
      Matcher m = HEADING.matcher(line);
      if (!inFence && m.matches()) {
        String slug = slug(m.group(2));
        int count = seen.merge(slug, 1, Integer::sum);
        anchors.add(count == 1 ? slug : slug + "-" + (count - 1));
      }
    }
    return anchors;
  }

  /**
   * GitHub's heading slug: the rendered text (a link is its text), lower-cased, with everything but
   * letters, digits, {@code _}, {@code -} and spaces removed, and each space a hyphen.
   */
  static String slug(String heading) {
    String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
    StringBuilder slug = new StringBuilder();
    text.codePoints()
        .forEach(
            c -> {
              if (Character.isLetterOrDigit(c) || c == '_' || c == '-') {
                slug.appendCodePoint(c);
              } else if (c == ' ') {
                slug.append('-');
              }
            });
    return slug.toString();
  }

  /**
   * The {@code ./privagg} commands in a page's fenced code blocks: a line (after an optional {@code
   * $ } prompt) that starts with {@code ./privagg}, joined with the lines its trailing backslashes
   * continue it onto.
   */
  private static List<Shown> shownCommands(Path page) throws IOException {
    List<Shown> shown = new ArrayList<>();
    List<String> lines = Files.readAllLines(page);
    boolean inFence = false;
    for (int i = 0; i < lines.size(); i++) {
      String line = lines.get(i);
      if (FENCE.matcher(line).find()) {
        inFence = !inFence;
        continue;
      }
      String command = line.strip();
      if (command.startsWith("$ ")) {
        command = command.substring(2).strip();
      }
      if (!inFence || !command.startsWith("./privagg")) {
        continue;
      }
      int first = i;
      StringBuilder joined = new StringBuilder();
      while (command.endsWith("\\") && i + 1 < lines.size()) {
        joined.append(command, 0, command.length() - 1).append(' ');
        command = lines.get(++i).strip();
      }
      joined.append(command);
      List<String> words = shellWords(joined.toString());
      if (words.isEmpty() || !words.get(0).equals("./privagg")) {
        continue;
      }
      shown.add(new Shown(page, first + 1, joined.toString(), words.subList(1, words.size())));
    }
    return shown;
  }

  /**
   * The words of a simple shell command line: single and double quotes and backslash escapes
   * honoured, placeholders such as {@code <round>} replaced by {@code 1}, and everything from an
   * unquoted comment, pipe, redirection, {@code &} or {@code ;} on dropped.
   */
  static List<String> shellWords(String line) {
    String text = PLACEHOLDER.matcher(line).replaceAll("1");
    List<String> words = new ArrayList<>();
    StringBuilder word = new StringBuilder();
    boolean inWord = false;
    char quote = 0;
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (quote != 0) {
        if (c == quote) {
          quote = 0;
        } else if (c == '\\' && quote == '"' && i + 1 < text.length()) {
          word.append(text.charAt(++i));
        } else {
          word.append(c);
        }
      } else if (c == '\'' || c == '"') {
        quote = c;
        inWord = true;
      } else if (c == '\\' && i + 1 < text.length()) {
        word.append(text.charAt(++i));
        inWord = true;
      } else if (Character.isWhitespace(c)) {
        if (inWord) {
          words.add(word.toString());
          word.setLength(0);
          inWord = false;
        }
      } else if ((c == '#' && !inWord)
          || c == '|'
          || c == '>'
          || c == '<'
          || c == '&'
          || c == ';') {
        if (inWord && (c == '>' || c == '<') && word.chars().allMatch(Character::isDigit)) {
          inWord = false; // the 2 of 2>&1 names a file descriptor, not an argument
        }
        break;
      } else {
        word.append(c);
        inWord = true;
      }
    }
    if (inWord) {
      words.add(word.toString());
    }
    return words;
  }
}
