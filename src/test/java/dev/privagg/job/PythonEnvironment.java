package dev.privagg.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The Python client installed as the README tells users: a venv of Debian's Python with its system
 * packages, and {@code pip install --no-build-isolation --no-index ./clients/python} into it, under
 * {@code target/python-venv} (made anew once per test JVM, so the install path is tested).
 */
final class PythonEnvironment {
  static final Path SYSTEM_PYTHON = Path.of("/usr/bin/python3");
  static final Path VENV = Path.of("target", "python-venv").toAbsolutePath();
  private static boolean installed;

  private PythonEnvironment() {}

  /** The venv's python, after creating the venv and installing the client (once). */
  static synchronized Path python() throws Exception {
    if (!installed) {
      assertThat(SYSTEM_PYTHON)
          .as("Debian's python3 (see .ci/run for the packages the Python client needs)")
          .exists();
      deleteRecursively(VENV);
      run(
          List.of(
              SYSTEM_PYTHON.toString(), "-m", "venv", "--system-site-packages", VENV.toString()),
          Map.of(),
          Path.of("target", "python-venv.log"),
          120);
      run(
          List.of(
              VENV.resolve("bin/pip").toString(),
              "install",
              "--no-build-isolation",
              "--no-index",
              "./clients/python"),
          Map.of(),
          Path.of("target", "python-install.log"),
          300);
      installed = true;
    }
    return VENV.resolve("bin/python");
  }

  /**
   * Runs {@code command} in the repository root with {@code env} added; its output goes to {@code
   * log} and is returned. Fails, showing the output, if it exits non-zero or overruns.
   */
  static String run(List<String> command, Map<String, String> env, Path log, long timeoutSeconds)
      throws Exception {
    Files.createDirectories(log.toAbsolutePath().getParent());
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().putAll(env);
    // No bytecode or pytest cache next to the sources.
    builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
    builder.environment().put("PYTHONUNBUFFERED", "1");
    Process process = builder.start();
    boolean done = process.waitFor(timeoutSeconds, TimeUnit.SECONDS);
    if (!done) {
      process.descendants().forEach(ProcessHandle::destroyForcibly);
      process.destroyForcibly().waitFor();
    }
    String output = Files.readString(log, StandardCharsets.UTF_8);
    System.out.println("--- " + String.join(" ", command) + "\n" + output);
    assertThat(done).as("%s overran %d s; output:%n%s", command, timeoutSeconds, output).isTrue();
    assertThat(process.exitValue()).as("exit code of %s; output:%n%s", command, output).isZero();
    return output;
  }

  private static void deleteRecursively(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    List<Path> paths = new ArrayList<>();
    try (var walk = Files.walk(dir)) {
      walk.forEach(paths::add);
    }
    for (int i = paths.size() - 1; i >= 0; i--) {
      Files.delete(paths.get(i));
    }
  }
}
