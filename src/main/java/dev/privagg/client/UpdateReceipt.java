package dev.privagg.client;

import dev.privagg.avro.RoundAnnouncement;
import java.util.Locale;
import java.util.OptionalLong;
import org.apache.kafka.clients.producer.RecordMetadata;

/**
 * The broker's acknowledgement of an update {@link PrivaggClient#send} sent: where the updates
 * topic holds it, the broker's timestamp of it and the round deadline it was checked against.
 *
 * <p>{@code appendedMillis} is the record's timestamp as the broker acknowledged it: its append
 * time on an updates topic with {@code message.timestamp.type=LogAppendTime}, which the job
 * requires and by which it decides which round an update belongs to. On a topic of another type the
 * Java producer reports its own create time here (the job then rejects every update as
 * CLIENT_TIMESTAMP, and lateness is judged by this machine's clock); empty when no timestamp came.
 * {@code deadlineMillis} is the deadline of the round's announcement the client had read, empty
 * when it had read none (then nothing was checked).
 *
 * <p>A receipt says the update arrived before the deadline the client knew, not that the job took
 * it: a round with {@code rounds.closeEarly} closes once enough updates arrived, before its
 * announced deadline and unseen by clients, and the job also rejects duplicates, updates after its
 * budget is spent and unsampled ones, on its operator-only rejects topic.
 */
public record UpdateReceipt(
    long round,
    int partition,
    long offset,
    OptionalLong appendedMillis,
    OptionalLong deadlineMillis) {

  /**
   * The receipt of the update for {@code round} the broker acknowledged with {@code metadata},
   * checked against {@code announcement} (null when the client read none).
   */
  static UpdateReceipt of(long round, RecordMetadata metadata, RoundAnnouncement announcement) {
    return new UpdateReceipt(
        round,
        metadata.partition(),
        metadata.offset(),
        metadata.hasTimestamp() ? OptionalLong.of(metadata.timestamp()) : OptionalLong.empty(),
        announcement == null
            ? OptionalLong.empty()
            : OptionalLong.of(announcement.getDeadlineMillis()));
  }

  /**
   * How long before the known deadline the broker appended the update (zero or negative: at or
   * after it, so late); empty when either time is unknown.
   */
  public OptionalLong millisBeforeDeadline() {
    return appendedMillis.isPresent() && deadlineMillis.isPresent()
        ? OptionalLong.of(deadlineMillis.getAsLong() - appendedMillis.getAsLong())
        : OptionalLong.empty();
  }

  /**
   * This receipt, unless the broker appended the update at or after the known deadline: a round
   * takes the updates appended in [open, deadline), so the job rejects a later one as stale.
   *
   * @throws LateUpdateException naming the client, the round and by how much it was late
   */
  UpdateReceipt requireInTime(String clientId) {
    OptionalLong left = millisBeforeDeadline();
    if (left.isPresent() && left.getAsLong() <= 0) {
      throw new LateUpdateException(
          String.format(
              Locale.ROOT,
              "the update of %s for round %d reached the broker %.3f s after the round's deadline"
                  + " (by the broker's clock, which the job decides by): the job rejects it as"
                  + " stale. Train faster, or join only rounds with enough time left",
              clientId,
              round,
              -left.getAsLong() / 1000.0),
          this);
    }
    return this;
  }
}
