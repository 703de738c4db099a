package dev.privagg.job.combine;

import dev.privagg.job.RoundPartial;
import dev.privagg.job.UnmaskRequest;
import dev.privagg.secagg.MaskStream;
import java.util.Arrays;
import org.apache.flink.api.common.functions.MapFunction;

/**
 * One block of a secure round's mask correction: expands each term's mask over the block's
 * coordinates only (the masks are seekable), in parallel with the other blocks, and sends the sum
 * to the combiner as a partial. Stateless: a replayed request gives the same partial.
 */
public final class UnmaskBlockFunction implements MapFunction<UnmaskRequest, RoundPartial> {
  private static final int TERM_BYTES = 33;

  @Override
  public RoundPartial map(UnmaskRequest request) {
    long[] units = new long[request.length];
    int from = request.offset;
    for (int t = 0; t + TERM_BYTES <= request.terms.length; t += TERM_BYTES) {
      int sign = request.terms[t];
      byte[] key = Arrays.copyOfRange(request.terms, t + 1, t + TERM_BYTES);
      new MaskStream(key).addTo(units, from, from + request.length, sign);
    }
    return RoundPartial.unmaskBlock(
        request.jobId, request.blockKey, request.round, request.offset, units);
  }
}
