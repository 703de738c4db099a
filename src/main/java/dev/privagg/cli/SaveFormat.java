package dev.privagg.cli;

import dev.privagg.avro.GlobalModel;
import dev.privagg.avro.PrivacyStatement;
import dev.privagg.client.PrivaggClient;
import dev.privagg.io.ModelFile;
import dev.privagg.io.Tensors;
import dev.privagg.sim.Reports;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How {@code privagg consume --save} writes each model: JSON (tensors and privacy statement, for
 * any language), safetensors (float32 tensors, the privacy statement in {@code __metadata__}; loads
 * in PyTorch) or NumPy npz (tensors only).
 */
enum SaveFormat {
  JSON(".json"),
  SAFETENSORS(".safetensors"),
  NPZ(".npz");

  private final String extension;

  SaveFormat(String extension) {
    this.extension = extension;
  }

  /** Writes {@code m} to {@code dir}/round-N with this format's extension and returns the path. */
  Path write(GlobalModel m, Path dir) throws IOException {
    Files.createDirectories(dir);
    Path file = dir.resolve("round-" + m.getRound() + extension);
    switch (this) {
      case JSON -> Reports.json(file, json(m));
      case SAFETENSORS ->
          ModelFile.write(
              file,
              ModelFile.Format.SAFETENSORS,
              Tensors.toFloatTensors(m.getTensors()),
              metadata(m));
      case NPZ ->
          ModelFile.write(
              file, ModelFile.Format.NPZ, Tensors.toFloatTensors(m.getTensors()), Map.of());
    }
    return file;
  }

  /** The job, round and privacy statement as strings (safetensors metadata holds only strings). */
  static Map<String, String> metadata(GlobalModel m) {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("jobId", m.getJobId());
    out.put("round", Long.toString(m.getRound()));
    statement(m.getPrivacy()).forEach((k, v) -> out.put(k, String.valueOf(v)));
    return out;
  }

  /** The privacy statement's fields; infinities as "Infinity", an absent value as null. */
  static Map<String, Object> statement(PrivacyStatement p) {
    return Output.fields(
        "epsilon", Output.number(p.getEpsilon()),
        "delta", p.getDelta(),
        "accountant", p.getAccountant(),
        "noiseMultiplier", p.getNoiseMultiplier(),
        "chargedNoiseMultiplier", p.getChargedNoiseMultiplier(),
        "clipNorm", p.getClipNorm(),
        "samplingRate", p.getSamplingRate(),
        "samplingMode", p.getSamplingMode(),
        "noiseSource", p.getNoiseSource(),
        "adjacency", p.getAdjacency(),
        "budgetEpsilon", Output.number(p.getBudgetEpsilon()),
        "charges", charges(p));
  }

  /**
   * The charges behind epsilon, one object per mechanism; null in models that do not state them.
   */
  private static List<Map<String, Object>> charges(PrivacyStatement p) {
    if (p.getCharges() == null) {
      return null;
    }
    return p.getCharges().stream()
        .map(
            c ->
                Output.fields(
                    "mechanismKind", c.getMechanismKind(),
                    "noiseMultiplier", c.getNoiseMultiplier(),
                    "samplingRate", c.getSamplingRate(),
                    "count", c.getCount()))
        .toList();
  }

  private static Map<String, Object> json(GlobalModel m) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("jobId", m.getJobId());
    json.put("round", m.getRound());
    Map<String, Object> tensors = new LinkedHashMap<>();
    double[][] weights = PrivaggClient.weights(m);
    for (int t = 0; t < weights.length; t++) {
      tensors.put(
          m.getTensors().get(t).getName(),
          Map.of("shape", m.getTensors().get(t).getShape(), "values", weights[t]));
    }
    json.put("tensors", tensors);
    json.put("privacy", statement(m.getPrivacy()));
    return json;
  }
}
