package dev.privagg.job.combine;

import dev.privagg.job.RoundPartial;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.secagg.MaskCorrection;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.api.common.functions.MapFunction;

/**
 * One block of a secure round's mask correction: expands each term's mask over the block's
 * coordinates only (masks are seekable), in parallel with the other blocks, and sends the result to
 * the combiner as a partial. Stateless: a replayed request gives the same partial.
 */
public final class UnmaskBlockFunction implements MapFunction<UnmaskRequest, RoundPartial> {
  private static final int TERM_BYTES = 33;

  @Override
  public RoundPartial map(UnmaskRequest request) {
    long[] units = new long[request.length];
    decode(request.terms).applyTo(units, request.offset, request.offset + request.length);
    return RoundPartial.unmaskBlock(
        request.jobId, request.blockKey, request.round, request.offset, units);
  }

  /** The correction an {@link UnmaskRequest} carries: a sign byte and a 32-byte key per term. */
  static MaskCorrection decode(byte[] terms) {
    List<MaskCorrection.Term> list = new ArrayList<>(terms.length / TERM_BYTES);
    for (int t = 0; t + TERM_BYTES <= terms.length; t += TERM_BYTES) {
      list.add(new MaskCorrection.Term(Arrays.copyOfRange(terms, t + 1, t + TERM_BYTES), terms[t]));
    }
    return new MaskCorrection(list);
  }
}
