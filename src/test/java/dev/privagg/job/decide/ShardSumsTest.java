package dev.privagg.job.decide;

import static dev.privagg.job.JobFixtures.exactSpec;
import static dev.privagg.job.JobFixtures.readFrom;
import static dev.privagg.job.JobFixtures.update;
import static org.assertj.core.api.Assertions.assertThat;

import dev.privagg.job.DecodedUpdate;
import dev.privagg.job.JobFixtures;
import dev.privagg.job.RoundPartial;
import dev.privagg.job.ShardCommand;
import dev.privagg.job.shard.ShardSums;
import dev.privagg.spec.JobSpec;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A shard's join of values and the decider's commands, in every arrival order. */
class ShardSumsTest {
  private static final String SHARD = "job-a#0.0";
  private final ShardSums shard = new ShardSums(exactSpec(""));
  private final LifecycleFakes.ShardStore store = new LifecycleFakes.ShardStore();
  private final List<RoundPartial> partials = new ArrayList<>();
  private final ShardSums.Output out =
      new ShardSums.Output() {
        @Override
        public void partial(RoundPartial partial) {
          partials.add(partial);
        }

        @Override
        public void clipped(boolean clipped, long nanos) {}
      };

  private static DecodedUpdate values(long offset, float w0) {
    DecodedUpdate u = readFrom(0, offset, update("c" + offset, 1, w0, 0f, 0f));
    u.shardKey = SHARD;
    return u;
  }

  private static ShardCommand admit(DecodedUpdate values) {
    return ShardCommand.admit(values.withoutValues(), SHARD, 0);
  }

  @Test
  void valuesFirstOrCommandsFirst_giveTheSamePartial_onlyOnceTheSealsCountIsIn() {
    DecodedUpdate a = values(1, 0.25f);
    DecodedUpdate b = values(2, 3f); // clipped to norm 1
    shard.values(store, a, out);
    shard.command(store, admit(a), out);
    shard.command(store, admit(b), out); // b's values are not here yet
    shard.command(store, ShardCommand.seal(JobFixtures.JOB, SHARD, 1, 2), out);
    assertThat(partials).as("sealed, but one admitted member is still missing").isEmpty();
    shard.values(store, b, out);
    assertThat(partials).singleElement().satisfies(p -> assertThat(p.contributions).isEqualTo(2));
    long[] commandsFirst = partials.get(0).units;

    ShardSums other = new ShardSums(exactSpec(""));
    LifecycleFakes.ShardStore otherStore = new LifecycleFakes.ShardStore();
    List<RoundPartial> otherPartials = new ArrayList<>();
    ShardSums.Output otherOut =
        new ShardSums.Output() {
          @Override
          public void partial(RoundPartial partial) {
            otherPartials.add(partial);
          }

          @Override
          public void clipped(boolean clipped, long nanos) {}
        };
    other.command(otherStore, admit(b), otherOut);
    other.command(otherStore, admit(a), otherOut);
    other.command(otherStore, ShardCommand.seal(JobFixtures.JOB, SHARD, 1, 2), otherOut);
    other.values(otherStore, b, otherOut);
    other.values(otherStore, a, otherOut);
    assertThat(otherPartials).singleElement();
    assertThat(otherPartials.get(0).units).isEqualTo(commandsFirst);
    assertThat(store.values).isEmpty();
    assertThat(store.commands).isEmpty();
    assertThat(store.rounds.byRound).isEmpty();
  }

  @Test
  void droppedUpdates_leaveNothingHeld_whicheverArrivesFirst() {
    DecodedUpdate early = values(1, 0.5f);
    DecodedUpdate late = values(2, 0.5f);
    shard.values(store, early, out);
    shard.command(store, ShardCommand.drop(early.withoutValues()), out);
    shard.command(store, ShardCommand.drop(late.withoutValues()), out);
    shard.values(store, late, out);
    shard.command(store, ShardCommand.seal(JobFixtures.JOB, SHARD, 1, 0), out);
    assertThat(partials).singleElement().satisfies(p -> assertThat(p.contributions).isZero());
    assertThat(store.values).isEmpty();
    assertThat(store.commands).isEmpty();
  }

  @Test
  void discardedRound_dropsItsSum_andSendsNothing() {
    DecodedUpdate a = values(1, 0.5f);
    shard.values(store, a, out);
    shard.command(store, admit(a), out);
    assertThat(store.rounds.byRound).containsKey(1L);
    shard.command(store, ShardCommand.discard(JobFixtures.JOB, SHARD, 1), out);
    assertThat(store.rounds.byRound).isEmpty();
    assertThat(partials).isEmpty();
  }

  @Test
  void aSecureJobsShard_addsMaskedInputsModulo2To64_neitherReadingThemAsFloatsNorClipping() {
    JobSpec secure =
        JobFixtures.spec(
            "noiseMultiplier: 0\nbudgetEpsilon: .inf",
            "minimumCohort: {count: 4.36, noiseStd: 0.05}",
            "aggregation: {mode: secure}");
    ShardSums masked = new ShardSums(secure);
    List<Boolean> clips = new ArrayList<>();
    ShardSums.Output secureOut =
        new ShardSums.Output() {
          @Override
          public void partial(RoundPartial partial) {
            partials.add(partial);
          }

          @Override
          public void clipped(boolean clipped, long nanos) {
            clips.add(clipped);
          }
        };
    // Read as float32, -1 words are NaN and Long.MAX_VALUE words far beyond C.
    DecodedUpdate a = maskedInput(1, Long.MAX_VALUE, -1, 7);
    DecodedUpdate b = maskedInput(2, 1, -1, Long.MIN_VALUE);
    masked.values(store, a, secureOut);
    masked.command(store, admit(a), secureOut);
    masked.command(store, admit(b), secureOut); // b's values come after the seal
    masked.command(store, ShardCommand.seal(JobFixtures.JOB, SHARD, 1, 2), secureOut);
    assertThat(partials).isEmpty();
    masked.values(store, b, secureOut);

    RoundPartial partial = partials.get(0);
    assertThat(partial.units).containsExactly(Long.MIN_VALUE, -2L, Long.MIN_VALUE + 7);
    assertThat(partial.contributions).isEqualTo(2);
    assertThat(partial.clipped).isZero();
    assertThat(partial.unitsOffset).isZero();
    assertThat(clips).as("nothing to clip: its client clipped it").isEmpty();
  }

  private static DecodedUpdate maskedInput(long offset, long... words) {
    java.nio.ByteBuffer bytes =
        java.nio.ByteBuffer.allocate(8 * words.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    bytes.asLongBuffer().put(words);
    DecodedUpdate u =
        new DecodedUpdate(
            JobFixtures.JOB,
            "c" + offset,
            1,
            new byte[][] {bytes.array()},
            new dev.privagg.job.RawUpdate("updates", 0, offset, null));
    u.shardKey = SHARD;
    return u;
  }
}
