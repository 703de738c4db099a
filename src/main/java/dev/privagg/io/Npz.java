package dev.privagg.io;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Enumeration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.zip.CRC32;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import java.util.zip.ZipOutputStream;

/**
 * NumPy's {@code .npz}: a zip archive (stored or deflated, as {@code numpy.savez} and {@code
 * numpy.savez_compressed} write it) of one {@code .npy} array per tensor, named by the entry name
 * without {@code .npy}. Every entry must be a {@code .npy}; see {@link Npy} for what each may hold.
 * The values of all arrays together are capped before each array's data is read, and an entry's
 * data is read as it inflates, so a zip bomb stops at the cap.
 */
final class Npz {
  /** Most entries read: far above any model's tensor count, far below what exhausts memory. */
  static final int MAX_ENTRIES = 65_536;

  private static final String SUFFIX = ".npy";

  private Npz() {}

  static ModelFile read(Path file, long maxValues) throws IOException {
    String source = file.toString();
    List<FloatTensor> tensors = new ArrayList<>();
    Set<String> names = new HashSet<>();
    long total = 0;
    try (ZipFile zip = new ZipFile(file.toFile())) {
      if (zip.size() > MAX_ENTRIES) {
        throw new ModelFileException(
            source, "has " + zip.size() + " entries; privagg reads up to " + MAX_ENTRIES);
      }
      Enumeration<? extends ZipEntry> entries = zip.entries();
      while (entries.hasMoreElements()) {
        ZipEntry entry = entries.nextElement();
        String entryName = entry.getName();
        if (entry.isDirectory() || !entryName.endsWith(SUFFIX)) {
          throw new ModelFileException(
              source,
              "entry '"
                  + entryName
                  + "' is not a .npy array; an .npz holds one .npy per tensor (numpy.savez)");
        }
        String name = entryName.substring(0, entryName.length() - SUFFIX.length());
        if (!names.add(name)) {
          throw new ModelFileException(source, "holds array '" + name + "' twice");
        }
        try (InputStream in = zip.getInputStream(entry)) {
          FloatTensor tensor = Npy.read(source, name, in, maxValues - total);
          total += tensor.values().length;
          tensors.add(tensor);
        }
      }
    } catch (java.util.zip.ZipException e) {
      throw new ModelFileException(
          source, "is not a readable zip (.npz) archive: " + e.getMessage());
    }
    return new ModelFile(tensors, Map.of());
  }

  /** Writes {@code tensors} as an uncompressed .npz, as {@code numpy.savez} does. */
  static void write(Path file, List<FloatTensor> tensors) throws IOException {
    Set<String> names = new HashSet<>();
    try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(file));
        ZipOutputStream zip = new ZipOutputStream(os)) {
      for (FloatTensor t : tensors) {
        if (!names.add(t.name())) {
          throw new IllegalArgumentException("tensor name '" + t.name() + "' is used twice");
        }
        byte[] npy = Npy.encode(t);
        ZipEntry entry = new ZipEntry(t.name() + SUFFIX);
        entry.setMethod(ZipEntry.STORED);
        entry.setSize(npy.length);
        CRC32 crc = new CRC32();
        crc.update(npy);
        entry.setCrc(crc.getValue());
        zip.putNextEntry(entry);
        zip.write(npy);
        zip.closeEntry();
      }
    }
  }
}
