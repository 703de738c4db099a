package dev.privagg.io;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The float32 tensors of a model file (safetensors or NumPy {@code .npz}) and the file's string
 * metadata (safetensors {@code __metadata__}; an npz has none).
 *
 * @param tensors in the file's order
 * @param metadata string pairs, empty when the file has none
 */
public record ModelFile(List<FloatTensor> tensors, Map<String, String> metadata) {
  /** Copies both, so the record is immutable. */
  public ModelFile {
    tensors = List.copyOf(tensors);
    metadata = Map.copyOf(metadata);
  }

  /** The formats privagg reads and writes, by file name extension. */
  public enum Format {
    SAFETENSORS(".safetensors"),
    NPZ(".npz");

    private final String extension;

    Format(String extension) {
      this.extension = extension;
    }

    /** The file name extension, with its dot. */
    public String extension() {
      return extension;
    }

    /** The format of {@code file} by its extension. */
    public static Format of(Path file) {
      String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
      for (Format format : values()) {
        if (name.endsWith(format.extension)) {
          return format;
        }
      }
      throw new ModelFileException(
          file.toString(),
          "is neither .safetensors nor .npz; privagg reads model files in those two formats");
    }
  }

  /**
   * Reads {@code file} in the format its extension names, allocating for at most {@code maxValues}
   * values: a file that declares more is refused before its data is read.
   */
  public static ModelFile read(Path file, long maxValues) throws IOException {
    return switch (Format.of(file)) {
      case SAFETENSORS -> Safetensors.read(file, maxValues);
      case NPZ -> Npz.read(file, maxValues);
    };
  }

  /** Writes {@code tensors} to {@code file} in {@code format} (npz keeps no metadata). */
  public static void write(
      Path file, Format format, List<FloatTensor> tensors, Map<String, String> metadata)
      throws IOException {
    switch (format) {
      case SAFETENSORS -> Safetensors.write(file, tensors, metadata);
      case NPZ -> Npz.write(file, tensors);
    }
  }
}
