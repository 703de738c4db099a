package dev.privagg.spec;

import dev.privagg.io.FloatTensor;
import dev.privagg.io.ModelFile;
import dev.privagg.io.ModelFileException;
import java.io.IOException;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads {@code model.initFile} and checks it against {@code model.tensors}: the same tensor names,
 * each with the spec's shape, all values finite. Every mismatch is named in one message, with the
 * fix.
 */
final class InitialWeights {
  private static final String KEY = "initFile";

  private InitialWeights() {}

  /** The file's values in the order of {@code tensors}. */
  static float[] read(
      YamlSection model,
      String jobId,
      String initFile,
      List<JobSpec.TensorSpec> tensors,
      InitFiles files) {
    long dimension = tensors.stream().mapToLong(JobSpec.TensorSpec::size).sum();
    ModelFile file;
    try {
      file = files.read(jobId, initFile, dimension);
    } catch (NoSuchFileException e) {
      throw model.fail(
          KEY,
          "'"
              + initFile
              + "' does not exist"
              + (files.location(initFile) == null ? "" : " (" + files.location(initFile) + ")")
              + "; a relative path is read from the spec file's directory");
    } catch (ModelFileException e) {
      throw model.fail(
          KEY,
          "'"
              + initFile
              + "' cannot be the initial model: "
              + e.getMessage()
              + "; it must hold exactly model.tensors ("
              + dimension
              + " values)");
    } catch (IOException e) {
      throw model.fail(KEY, "'" + initFile + "' cannot be read: " + e);
    }
    return match(model, initFile, tensors, file.tensors());
  }

  private static float[] match(
      YamlSection model,
      String initFile,
      List<JobSpec.TensorSpec> tensors,
      List<FloatTensor> found) {
    Map<String, FloatTensor> byName = new LinkedHashMap<>();
    for (FloatTensor t : found) {
      byName.put(t.name(), t);
    }
    Map<String, FloatTensor> all = Map.copyOf(byName);
    List<String> problems = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    for (JobSpec.TensorSpec t : tensors) {
      FloatTensor f = byName.remove(t.name());
      if (f == null) {
        missing.add(t.name() + " " + Arrays.toString(t.shape()));
      } else if (!Arrays.equals(f.shape(), t.shape())) {
        problems.add(
            "tensor '"
                + t.name()
                + "' has shape "
                + f.shapeText()
                + " in the file, model.tensors says "
                + Arrays.toString(t.shape()));
      }
    }
    if (!missing.isEmpty()) {
      problems.add("missing from the file: " + missing);
    }
    if (!byName.isEmpty()) {
      List<String> extra = new ArrayList<>();
      byName.values().forEach(t -> extra.add(t.name() + " " + t.shapeText()));
      problems.add("in the file but not in model.tensors: " + extra);
    }
    if (!problems.isEmpty()) {
      throw model.fail(
          KEY,
          "'"
              + initFile
              + "' does not match model.tensors: "
              + String.join("; ", problems)
              + ". Write the file with exactly the spec's tensor names and shapes (e.g. transpose"
              + " a PyTorch Linear weight, which is [out, in]), or change model.tensors");
    }
    float[] values = new float[tensors.stream().mapToInt(JobSpec.TensorSpec::size).sum()];
    int offset = 0;
    for (JobSpec.TensorSpec t : tensors) {
      float[] v = all.get(t.name()).values();
      for (int i = 0; i < v.length; i++) {
        if (!Float.isFinite(v[i])) {
          throw model.fail(
              KEY,
              "'"
                  + initFile
                  + "' tensor '"
                  + t.name()
                  + "' holds "
                  + v[i]
                  + " at flat index "
                  + i
                  + "; initial weights must be finite");
        }
      }
      System.arraycopy(v, 0, values, offset, v.length);
      offset += v.length;
    }
    return values;
  }
}
