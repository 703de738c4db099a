package dev.privagg.secagg;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class ShareCipherTest {
  private static final RoundContext CTX = new RoundContext("job", 3, new byte[16]);
  private static final RoundContext OTHER_SESSION =
      new RoundContext("job", 3, new byte[] {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});

  private final SplittableRandom random = new SplittableRandom(5);
  private final byte[] key = bytes(32);
  private final byte[] plaintext = bytes(ShareCipher.PLAINTEXT_BYTES);
  private final byte[] roster = bytes(RosterDigest.BYTES);

  @Test
  void ciphertext_isNonceThenCiphertextThenTag_andDecryptsToThePlaintext() throws Exception {
    byte[] ciphertext = ShareCipher.encrypt(key, CTX, 4, 9, roster, plaintext, random);

    assertThat(ciphertext).hasSize(12 + 64 + 16);
    assertThat(ShareCipher.decrypt(key, CTX, 4, 9, roster, ciphertext)).isEqualTo(plaintext);
  }

  @Test
  void decrypt_refusesAnotherContextSenderRecipientRosterOrKey_asForged() {
    byte[] ciphertext = ShareCipher.encrypt(key, CTX, 4, 9, roster, plaintext, random);

    assertThatThrownBy(() -> ShareCipher.decrypt(key, OTHER_SESSION, 4, 9, roster, ciphertext))
        .isInstanceOf(ForgedShareException.class)
        .hasMessage("forged share from sender 4 to recipient 9: the GCM tag does not verify");
    assertThatThrownBy(() -> ShareCipher.decrypt(key, CTX, 5, 9, roster, ciphertext))
        .isInstanceOf(ForgedShareException.class);
    assertThatThrownBy(() -> ShareCipher.decrypt(key, CTX, 4, 8, roster, ciphertext))
        .isInstanceOf(ForgedShareException.class);
    assertThatThrownBy(() -> ShareCipher.decrypt(bytes(32), CTX, 4, 9, roster, ciphertext))
        .isInstanceOf(ForgedShareException.class);
    // A holder shown another roster than the dealer's cannot open the share.
    byte[] otherRoster = roster.clone();
    otherRoster[31] ^= 1;
    assertThatThrownBy(() -> ShareCipher.decrypt(key, CTX, 4, 9, otherRoster, ciphertext))
        .isInstanceOf(ForgedShareException.class);
  }

  @Test
  void decrypt_refusesAFlippedBitOrAWrongLength_asForged() {
    byte[] ciphertext = ShareCipher.encrypt(key, CTX, 4, 9, roster, plaintext, random);
    for (int at : new int[] {0, 12, 60, 91}) {
      byte[] altered = ciphertext.clone();
      altered[at] ^= 1;
      assertThatThrownBy(() -> ShareCipher.decrypt(key, CTX, 4, 9, roster, altered))
          .as("bit flipped at byte %d", at)
          .isInstanceOf(ForgedShareException.class)
          .satisfies(e -> assertThat(((ForgedShareException) e).sender()).isEqualTo(4));
    }
    assertThatThrownBy(() -> ShareCipher.decrypt(key, CTX, 4, 9, roster, new byte[91]))
        .isInstanceOf(ForgedShareException.class)
        .hasMessage(
            "forged share from sender 4 to recipient 9: ciphertext must be 92 bytes, was 91");
  }

  private byte[] bytes(int n) {
    byte[] out = new byte[n];
    random.nextBytes(out);
    return out;
  }
}
