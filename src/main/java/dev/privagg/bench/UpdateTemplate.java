package dev.privagg.bench;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.Tensor;
import dev.privagg.io.AvroCodec;
import dev.privagg.io.Float32;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The encoded ClientUpdate of one round, re-addressed to each synthetic client by rewriting the
 * client id's digits in place: encoding a 32 MB update once per client would make the benchmark's
 * producer, not the job, the bottleneck. Client ids have a fixed width ({@code c0000042}), so the
 * Avro length prefixes never change and every variant is a valid record.
 */
public final class UpdateTemplate {
  static final int CLIENT_DIGITS = 7;
  private static final int MAX_CLIENTS = 10_000_000;

  private final byte[] bytes;
  private final int digitsAt;

  /** Encodes one update of {@code values} (one tensor named {@code w}) for {@code round}. */
  public UpdateTemplate(String jobId, long round, float[] values) {
    String placeholder = clientId(0);
    Tensor tensor =
        new Tensor("w", List.of(values.length), Float32.write(values, 0, values.length));
    bytes = AvroCodec.encode(new ClientUpdate(jobId, round, placeholder, List.of(tensor), null));
    digitsAt = indexOf(bytes, placeholder.getBytes(StandardCharsets.US_ASCII)) + 1;
  }

  /** The id of synthetic client {@code client}. */
  public static String clientId(int client) {
    if (!(client >= 0 && client < MAX_CLIENTS)) {
      throw new IllegalArgumentException(
          "client must be in [0, " + MAX_CLIENTS + "), was " + client);
    }
    return String.format("c%0" + CLIENT_DIGITS + "d", client);
  }

  /**
   * The update of {@code client}. The same array is returned and rewritten on every call: send it
   * (the Kafka producer copies it during {@code send}) before asking for the next client's.
   */
  public byte[] forClient(int client) {
    byte[] id = clientId(client).getBytes(StandardCharsets.US_ASCII);
    System.arraycopy(id, 1, bytes, digitsAt, CLIENT_DIGITS);
    return bytes;
  }

  /** Encoded size of every variant. */
  public int size() {
    return bytes.length;
  }

  private static int indexOf(byte[] haystack, byte[] needle) {
    // The client id sits in the record's header fields, long before the tensor data.
    outer:
    for (int i = 0; i + needle.length <= haystack.length; i++) {
      for (int j = 0; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return i;
    }
    throw new IllegalStateException("the client id is not in the encoded update");
  }
}
