package dev.privagg.secagg;

import java.util.List;

/**
 * A client's phase-4 message: its shares of the self-mask seeds of its neighbours that sent a
 * masked input (U3), and of the mask private keys of its neighbours that shared keys but sent no
 * masked input (U2 \ U3). Never both kinds for one neighbour.
 */
public record UnmaskShares(List<RevealedShare> selfMaskShares, List<RevealedShare> maskKeyShares) {
  public UnmaskShares {
    selfMaskShares = List.copyOf(selfMaskShares);
    maskKeyShares = List.copyOf(maskKeyShares);
  }

  /** The share, held by the message's sender, of the secret of client {@code index}. */
  public record RevealedShare(int index, byte[] share) {
    public RevealedShare {
      share = share.clone();
    }

    @Override
    public byte[] share() {
      return share.clone();
    }
  }
}
