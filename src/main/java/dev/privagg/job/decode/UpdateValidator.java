package dev.privagg.job.decode;

import dev.privagg.avro.ClientUpdate;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.Tensor;
import dev.privagg.io.Float32;
import dev.privagg.io.SecureMessageReader;
import dev.privagg.io.UpdateReader;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.decide.DecideFunction;
import dev.privagg.spec.JobSpec;
import java.io.Serializable;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes a raw update and checks it against its job's spec: size, encoding, known job, caps on
 * client id, metadata and declared collections (checked before anything is allocated, see {@link
 * UpdateReader}), tensor names, shapes and byte lengths, finite values. Round, duplicate and budget
 * checks need the job's state and happen in {@link DecideFunction}.
 */
public final class UpdateValidator implements Serializable {
  private final Map<String, JobSpec> specs = new HashMap<>();
  private final Map<String, UpdateReader.Limits> limits = new HashMap<>();
  private final long maxRecordBytes;
  // The roomiest job's collection items: what an earlier-schema record may declare in all.
  private final long maxCollectionItems;

  private final SecureMessageValidator secureMessages;

  UpdateValidator(List<JobSpec> specs) {
    this.secureMessages = new SecureMessageValidator(specs);
    long max = 0;
    long items = 0;
    for (JobSpec spec : specs) {
      UpdateReader.Limits jobLimits = limitsOf(spec);
      this.specs.put(spec.jobId(), spec);
      this.limits.put(spec.jobId(), jobLimits);
      max = Math.max(max, spec.maxRecordBytes());
      items = Math.max(items, jobLimits.collectionItems());
    }
    this.maxRecordBytes = max;
    this.maxCollectionItems = items;
  }

  /** True when {@code value} is within the largest record size of any job here. */
  boolean fitsAnyJob(byte[] value) {
    return value != null && value.length <= maxRecordBytes;
  }

  /** What the reader may allocate for one of this job's records: nothing the job cannot use. */
  static UpdateReader.Limits limitsOf(JobSpec spec) {
    List<JobSpec.TensorSpec> tensors = spec.model().tensors();
    int maxRank = tensors.stream().mapToInt(t -> t.shape().length).max().orElse(1);
    int maxName =
        tensors.stream()
            .mapToInt(t -> t.name().getBytes(java.nio.charset.StandardCharsets.UTF_8).length)
            .max()
            .orElse(1);
    return new UpdateReader.Limits(
        spec.maxClientIdBytes(), spec.maxMetadataBytes(), tensors.size(), maxRank, maxName);
  }

  /** The outcome: either {@code update} or a reject with reason and detail. */
  record Result(DecodedUpdate update, Rejection rejection) {}

  /** Why an update was not accepted, with whatever of its identity could be read. */
  record Rejection(RejectReason reason, String detail, String jobId, String clientId, Long round) {}

  Result validate(RawUpdate raw) {
    int size = raw.value == null ? 0 : raw.value.length;
    if (size > maxRecordBytes) {
      return reject(
          RejectReason.RECORD_TOO_LARGE,
          size + " bytes exceeds the limit of " + maxRecordBytes,
          null);
    }
    if (SecureMessageReader.isSecureMessage(raw.value)) {
      return secureMessages.validate(raw);
    }
    ClientUpdate update;
    try {
      update = UpdateReader.read(raw.value, limits::get, maxCollectionItems);
    } catch (UpdateReader.Rejected e) {
      String detail = e.getMessage();
      if (e.reason() == RejectReason.UNKNOWN_JOB) {
        detail += "; known jobs: " + specs.keySet();
      }
      return new Result(
          null, new Rejection(e.reason(), detail, e.jobId(), e.clientId(), e.round()));
    }
    JobSpec spec = specs.get(update.getJobId());
    if (spec.secureAggregation()) {
      return reject(
          RejectReason.WRONG_AGGREGATION,
          "job '"
              + spec.jobId()
              + "' aggregates securely: clients send SecureMessage records through the four"
              + " phases of docs/secure-aggregation.md (the privagg client libraries do), never a"
              + " plain ClientUpdate",
          update);
    }
    if (size > spec.maxRecordBytes()) {
      return reject(
          RejectReason.RECORD_TOO_LARGE,
          size + " bytes exceeds the job's limit of " + spec.maxRecordBytes(),
          update);
    }
    List<JobSpec.TensorSpec> expected = spec.model().tensors();
    if (update.getTensors().size() != expected.size()) {
      return reject(
          RejectReason.WRONG_TENSORS,
          "has "
              + update.getTensors().size()
              + " tensors, the job expects "
              + expected.size()
              + " "
              + names(expected),
          update);
    }
    Map<String, Tensor> byName = new HashMap<>();
    for (Tensor tensor : update.getTensors()) {
      byName.put(tensor.getName(), tensor);
    }
    byte[][] values = new byte[expected.size()][];
    for (int t = 0; t < expected.size(); t++) {
      JobSpec.TensorSpec want = expected.get(t);
      Tensor got = byName.get(want.name());
      if (got == null) {
        return reject(
            RejectReason.WRONG_TENSORS,
            "has no tensor '" + want.name() + "'; the job expects " + names(expected),
            update);
      }
      int[] shape = got.getShape().stream().mapToInt(Integer::intValue).toArray();
      if (!Arrays.equals(shape, want.shape())) {
        return reject(
            RejectReason.WRONG_TENSORS,
            "tensor '"
                + want.name()
                + "' has shape "
                + Arrays.toString(shape)
                + ", expected "
                + Arrays.toString(want.shape()),
            update);
      }
      int bytes = got.getData().remaining();
      if (bytes != 4L * want.size()) {
        return reject(
            RejectReason.WRONG_TENSORS,
            "tensor '"
                + want.name()
                + "' holds "
                + bytes
                + " bytes, expected "
                + 4L * want.size()
                + " (float32 little-endian)",
            update);
      }
      values[t] = Float32.bytes(got.getData());
      int bad = Float32.firstNonFinite(values[t]);
      if (bad >= 0) {
        return reject(
            RejectReason.NON_FINITE_VALUES,
            "tensor '"
                + want.name()
                + "' holds "
                + Float32.get(values[t], bad)
                + " at index "
                + bad,
            update);
      }
    }
    DecodedUpdate decoded =
        new DecodedUpdate(update.getJobId(), update.getClientId(), update.getRound(), values, raw);
    if (spec.adaptiveClipping()) {
      decoded.norm = l2Norm(values);
    }
    return new Result(decoded, null);
  }

  /** The L2 norm of an update's values over all tensors, as flat clipping measures it. */
  public static double l2Norm(byte[][] values) {
    double total = 0;
    for (byte[] tensor : values) {
      total += Float32.sumOfSquares(tensor);
    }
    return Math.sqrt(total);
  }

  /** The outcome for a record whose validation threw: a reject that keeps the record's bytes. */
  static Result internalError(RuntimeException e) {
    return new Result(
        null,
        new Rejection(
            RejectReason.UNDECODABLE, "internal error while validating: " + e, null, null, null));
  }

  private static Result reject(RejectReason reason, String detail, ClientUpdate update) {
    return new Result(
        null,
        new Rejection(
            reason,
            detail,
            update == null ? null : update.getJobId(),
            update == null ? null : update.getClientId(),
            update == null ? null : update.getRound()));
  }

  private static String names(List<JobSpec.TensorSpec> tensors) {
    return tensors.stream().map(JobSpec.TensorSpec::name).toList().toString();
  }
}
