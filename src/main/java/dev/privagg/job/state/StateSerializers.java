package dev.privagg.job.state;

import dev.privagg.job.CombinedRound;
import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.JobProgress;
import dev.privagg.job.ModelState;
import dev.privagg.job.NoiseBuffers;
import dev.privagg.job.OpenRound;
import dev.privagg.job.Participation;
import dev.privagg.job.PublicRounds;
import dev.privagg.job.RoundNoise;
import dev.privagg.job.SecureRoundState;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.ShardRound;
import java.io.IOException;
import java.util.List;

/**
 * The serializers of everything the job keeps in keyed state, each versioned by its {@link
 * StateLayout}. Operators declare their state with these, never with {@code Types.POJO}, whose
 * savepoints name the Java classes and fields.
 */
public final class StateSerializers {
  public static final StateSerializer<JobProgress> JOB_PROGRESS =
      current(JobProgressLayout.INSTANCE);
  public static final StateSerializer<OpenRound> OPEN_ROUND = current(OpenRoundLayout.INSTANCE);
  public static final StateSerializer<DecodedUpdate> DECODED_UPDATE =
      current(DecodedUpdateLayout.INSTANCE);
  public static final StateSerializer<ShardCommand> SHARD_COMMAND =
      current(ShardCommandLayout.INSTANCE);
  public static final StateSerializer<ShardRound> SHARD_ROUND = current(ShardRoundLayout.INSTANCE);
  public static final StateSerializer<CombinedRound> COMBINED_ROUND =
      current(CombinedRoundLayout.INSTANCE);
  public static final StateSerializer<ModelState> MODEL_STATE = current(ModelStateLayout.INSTANCE);
  public static final StateSerializer<PublicRounds.Position> PUBLISHED_POSITION =
      current(PublishedPositionLayout.INSTANCE);
  public static final StateSerializer<Participation> PARTICIPATION =
      current(ParticipationLayout.INSTANCE);
  public static final StateSerializer<NoiseBuffers> NOISE_BUFFERS =
      current(NoiseBuffersLayout.INSTANCE);
  public static final StateSerializer<RoundNoise> ROUND_NOISE = current(RoundNoiseLayout.INSTANCE);
  public static final StateSerializer<SecureRoundState> SECURE_ROUND =
      current(SecureRoundLayout.INSTANCE);

  /** Every layout a savepoint may name, the nested round signal included. */
  static final List<StateLayout<?>> LAYOUTS =
      List.of(
          JobProgressLayout.INSTANCE,
          OpenRoundLayout.INSTANCE,
          DecodedUpdateLayout.INSTANCE,
          ShardCommandLayout.INSTANCE,
          ShardRoundLayout.INSTANCE,
          CombinedRoundLayout.INSTANCE,
          RoundSignalLayout.INSTANCE,
          ModelStateLayout.INSTANCE,
          PublishedPositionLayout.INSTANCE,
          ParticipationLayout.INSTANCE,
          NoiseBuffersLayout.INSTANCE,
          RoundNoiseLayout.INSTANCE,
          SecureRoundLayout.INSTANCE);

  private StateSerializers() {}

  private static <T> StateSerializer<T> current(StateLayout<T> layout) {
    return new StateSerializer<>(layout, layout.version());
  }

  static StateLayout<?> layout(String id) throws IOException {
    for (StateLayout<?> layout : LAYOUTS) {
      if (layout.id().equals(id)) {
        return layout;
      }
    }
    throw new IOException(
        "a savepoint holds state '"
            + id
            + "', which this privagg does not know: restore it with"
            + " the privagg release that wrote it or a newer one");
  }
}
