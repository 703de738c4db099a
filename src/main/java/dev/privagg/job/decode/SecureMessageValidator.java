package dev.privagg.job.decode;

import dev.privagg.avro.AdvertiseKeys;
import dev.privagg.avro.EncryptedShare;
import dev.privagg.avro.MaskedInput;
import dev.privagg.avro.RejectReason;
import dev.privagg.avro.RevealedShare;
import dev.privagg.avro.SecureMessage;
import dev.privagg.avro.ShareKeys;
import dev.privagg.avro.ShareReceipt;
import dev.privagg.avro.SurvivorSignature;
import dev.privagg.avro.UnmaskShares;
import dev.privagg.io.SecureMessageReader;
import dev.privagg.io.UpdateReader;
import dev.privagg.job.RawUpdate;
import dev.privagg.job.SecureUpdate;
import dev.privagg.secagg.Edwards25519;
import dev.privagg.secagg.SigningKeys;
import dev.privagg.secagg.WordPacking;
import dev.privagg.secagg.X25519Keys;
import dev.privagg.spec.JobSpec;
import java.io.Serializable;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * What can be checked of a SecureMessage without the round's state: the job aggregates securely,
 * the id fits, and every field has the size docs/secure-aggregation.md gives it. Which phase is
 * open, who is on the roster and who neighbours whom are the decider's checks.
 */
final class SecureMessageValidator implements Serializable {
  static final int SESSION_BYTES = 16;
  static final int KEY_BYTES = 32;
  static final int CIPHERTEXT_BYTES = dev.privagg.secagg.ShareCipher.CIPHERTEXT_BYTES;
  static final int SHARE_BYTES = dev.privagg.secagg.Shamir.SHARE_BYTES;

  private final Map<String, JobSpec> specs = new HashMap<>();

  SecureMessageValidator(List<JobSpec> specs) {
    for (JobSpec spec : specs) {
      this.specs.put(spec.jobId(), spec);
    }
  }

  UpdateValidator.Result validate(RawUpdate raw) {
    SecureMessage m;
    try {
      m = SecureMessageReader.read(raw.value);
    } catch (UpdateReader.Rejected e) {
      return reject(e.reason(), e.getMessage(), null);
    }
    JobSpec spec = specs.get(m.getJobId());
    if (spec == null) {
      // Neither id was checked against any cap: the reject copies neither unless short, as
      // UpdateReader never reads more of a ClientUpdate's (a reject carries the record too, and
      // must fit the rejects topic).
      int idBytes = utf8Length(m.getJobId());
      boolean shortId = idBytes <= UpdateReader.MAX_JOB_ID_BYTES;
      return reject(
          RejectReason.UNKNOWN_JOB,
          shortId
              ? "no job '" + m.getJobId() + "' runs here; known jobs: " + specs.keySet()
              : "a job id of "
                  + idBytes
                  + " UTF-8 bytes: no job here has an id over "
                  + UpdateReader.MAX_JOB_ID_BYTES,
          shortId ? m.getJobId() : null,
          null,
          m.getRound());
    }
    if (!spec.secureAggregation()) {
      return reject(
          RejectReason.WRONG_AGGREGATION,
          "job '"
              + spec.jobId()
              + "' aggregates in plaintext (no aggregation.mode: secure): send ClientUpdate records",
          m.getJobId(),
          utf8Length(m.getClientId()) <= spec.maxClientIdBytes() ? m.getClientId() : "",
          m.getRound());
    }
    if (m.getClientId().getBytes(StandardCharsets.UTF_8).length > spec.maxClientIdBytes()) {
      return reject(
          RejectReason.CLIENT_ID_TOO_LONG,
          "client id exceeds " + spec.maxClientIdBytes() + " UTF-8 bytes",
          new SecureMessage(m.getJobId(), m.getRound(), m.getSession(), "", m.getBody()));
    }
    if (raw.value.length > spec.maxRecordBytes()) {
      // The caller checked only the roomiest job's limit; this job's is what its clients were told.
      return reject(
          RejectReason.RECORD_TOO_LARGE,
          raw.value.length + " bytes exceeds the job's limit of " + spec.maxRecordBytes(),
          m);
    }
    if (m.getSession().remaining() != SESSION_BYTES) {
      return reject(
          RejectReason.SECURE_PROTOCOL,
          "session has " + m.getSession().remaining() + " bytes, expected " + SESSION_BYTES,
          m);
    }
    String problem;
    int phase;
    byte[][] values = null;
    Object body = m.getBody();
    if (body instanceof AdvertiseKeys a) {
      phase = SecureUpdate.ADVERTISE;
      problem = advertiseProblem(a);
    } else if (body instanceof ShareKeys s) {
      phase = SecureUpdate.SHARE;
      problem = shareProblem(s);
    } else if (body instanceof ShareReceipt receipt) {
      phase = SecureUpdate.CONFIRM;
      problem = receiptProblem(receipt);
    } else if (body instanceof MaskedInput input) {
      phase = SecureUpdate.MASKED_INPUT;
      problem =
          WordPacking.problem(input.getValues(), spec.maskedDimension(), spec.maskedWordBits());
      values = new byte[][] {bytes(input.getValues())};
    } else if (body instanceof SurvivorSignature signature) {
      phase = SecureUpdate.CONSISTENCY;
      problem =
          signature.getSignature().remaining() == SigningKeys.SIGNATURE_BYTES
              ? null
              : "a survivor signature must have "
                  + SigningKeys.SIGNATURE_BYTES
                  + " bytes (Ed25519), had "
                  + signature.getSignature().remaining();
    } else {
      phase = SecureUpdate.UNMASK;
      problem = unmaskProblem((UnmaskShares) body);
    }
    if (problem != null) {
      return reject(RejectReason.SECURE_PROTOCOL, problem, m);
    }
    byte[] message = phase == SecureUpdate.MASKED_INPUT ? null : raw.value;
    SecureUpdate update =
        new SecureUpdate(
            m.getJobId(),
            m.getClientId(),
            m.getRound(),
            phase,
            bytes(m.getSession()),
            message,
            values,
            raw);
    return new UpdateValidator.Result(update, null);
  }

  private static String advertiseProblem(AdvertiseKeys a) {
    if (a.getEncryptionPublicKey().remaining() != KEY_BYTES
        || a.getMaskPublicKey().remaining() != KEY_BYTES
        || a.getSelfMaskCommitment().remaining() != KEY_BYTES) {
      return "public keys and commitment must have " + KEY_BYTES + " bytes each";
    }
    if (a.getSigningPublicKey().remaining() != SigningKeys.KEY_BYTES) {
      // Records of SecureMessage v2 decode with an empty key: a client from before the
      // consistency round, which could not sign the survivor list.
      return "signingPublicKey must have "
          + SigningKeys.KEY_BYTES
          + " bytes (Ed25519), had "
          + a.getSigningPublicKey().remaining()
          + "; a client from before the consistency round (SecureMessage v2) cannot take part:"
          + " upgrade it";
    }
    if (SigningKeys.hasSmallOrder(bytes(a.getSigningPublicKey()))) {
      // Signatures nobody made verify under it: the survivor list's signatures would mean nothing.
      return "signingPublicKey has small order; send a fresh Ed25519 key";
    }
    if (hasSmallOrder(bytes(a.getEncryptionPublicKey()))) {
      // Every key agreement with it is all zero: its shares would be no secret.
      return "encryptionPublicKey has small order (RFC 7748 section 6.1); send a fresh X25519 key";
    }
    for (String field : List.of("maskPublicKey", "selfMaskCommitment")) {
      ByteBuffer point =
          field.equals("maskPublicKey") ? a.getMaskPublicKey() : a.getSelfMaskCommitment();
      if (!Edwards25519.isValid(bytes(point))) {
        // Shares are checked against it and masks derive from it (verifiable secret sharing);
        // a client from before that (SecureMessage v3) sent an X25519 key and a hash here.
        return field
            + " is not a point of edwards25519's prime-order subgroup (RFC 8032 encoding, not the"
            + " identity); a client from before verifiable secret sharing (SecureMessage v3)"
            + " cannot take part: upgrade it";
      }
    }
    return null;
  }

  private static String shareProblem(ShareKeys s) {
    for (EncryptedShare share : s.getShares()) {
      if (share.getIndex() < 0 || share.getCiphertext().remaining() != CIPHERTEXT_BYTES) {
        return "each encrypted share needs an index >= 0 and "
            + CIPHERTEXT_BYTES
            + " bytes of ciphertext, was index "
            + share.getIndex()
            + " with "
            + share.getCiphertext().remaining()
            + " bytes";
      }
    }
    return null;
  }

  private static String unmaskProblem(UnmaskShares u) {
    for (List<RevealedShare> list : List.of(u.getSelfMaskShares(), u.getMaskKeyShares())) {
      for (RevealedShare share : list) {
        if (share.getIndex() < 0 || share.getShare().remaining() != SHARE_BYTES) {
          return "each revealed share needs an index >= 0 and "
              + SHARE_BYTES
              + " bytes, was index "
              + share.getIndex()
              + " with "
              + share.getShare().remaining()
              + " bytes";
        }
      }
    }
    return null;
  }

  private static final byte[] PROBE_KEY = new byte[32];

  static {
    PROBE_KEY[0] = 1; // any private key: X25519 clamps it to a multiple of 8
  }

  private static boolean hasSmallOrder(byte[] publicKey) {
    try {
      X25519Keys.agree(PROBE_KEY, publicKey);
      return false;
    } catch (IllegalArgumentException allZero) {
      return true;
    }
  }

  private static byte[] bytes(ByteBuffer buffer) {
    byte[] out = new byte[buffer.remaining()];
    buffer.duplicate().get(out);
    return out;
  }

  private static UpdateValidator.Result reject(
      RejectReason reason, String detail, SecureMessage m) {
    return reject(
        reason,
        detail,
        m == null ? null : m.getJobId(),
        m == null ? null : m.getClientId(),
        m == null ? null : m.getRound());
  }

  private static UpdateValidator.Result reject(
      RejectReason reason, String detail, String jobId, String clientId, Long round) {
    return new UpdateValidator.Result(
        null, new UpdateValidator.Rejection(reason, detail, jobId, clientId, round));
  }

  private static int utf8Length(String s) {
    return s.getBytes(StandardCharsets.UTF_8).length;
  }

  /** A receipt lists roster indices in ascending order, each once (which ones: the decider's). */
  private static String receiptProblem(ShareReceipt receipt) {
    int previous = -1;
    for (int index : receipt.getRejected()) {
      if (index <= previous) {
        return "a receipt's rejected indices must be ascending and >= 0, found "
            + index
            + " after "
            + previous;
      }
      previous = index;
    }
    return null;
  }
}
