package dev.privagg.job.combine;

import dev.privagg.job.CombinedRound;
import dev.privagg.job.ModelState;
import dev.privagg.job.RoundNoise;
import dev.privagg.job.state.MemoryRoundTable;
import dev.privagg.job.state.RoundTable;

/** A combiner's state in memory. */
public final class MemoryCombinerStore implements CombinedRounds.Store {
  public final MemoryRoundTable<CombinedRound> rounds = new MemoryRoundTable<>();
  public final MemoryRoundTable<RoundNoise> noise = new MemoryRoundTable<>();
  public ModelState model;

  @Override
  public RoundTable<CombinedRound> rounds() {
    return rounds;
  }

  @Override
  public ModelState model() {
    return model;
  }

  @Override
  public void saveModel(ModelState model) {
    this.model = model;
  }

  @Override
  public RoundTable<RoundNoise> noise() {
    return noise;
  }
}
