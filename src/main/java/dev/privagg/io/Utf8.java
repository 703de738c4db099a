package dev.privagg.io;

/** Strict UTF-8 validation without allocation. */
final class Utf8 {
  private Utf8() {}

  /**
   * True when {@code length} bytes at {@code offset} are well-formed UTF-8 (RFC 3629, Sec. 4): no
   * overlong forms, no surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no cut sequence.
   */
  static boolean isValid(byte[] bytes, int offset, int length) {
    int i = offset;
    int end = offset + length;
    while (i < end) {
      int b = bytes[i] & 0xFF;
      if (b < 0x80) {
        i++;
        continue;
      }
      int trailing;
      int min = 0x80;
      int max = 0xBF;
      if (b >= 0xC2 && b <= 0xDF) {
        trailing = 1;
      } else if (b >= 0xE0 && b <= 0xEF) {
        trailing = 2;
        if (b == 0xE0) {
          min = 0xA0; // overlong below U+0800
        } else if (b == 0xED) {
          max = 0x9F; // surrogates
        }
      } else if (b >= 0xF0 && b <= 0xF4) {
        trailing = 3;
        if (b == 0xF0) {
          min = 0x90; // overlong below U+10000
        } else if (b == 0xF4) {
          max = 0x8F; // above U+10FFFF
        }
      } else {
        return false; // a continuation byte first, C0/C1 (overlong), or F5..FF
      }
      if (end - i <= trailing) {
        return false;
      }
      int second = bytes[i + 1] & 0xFF;
      if (second < min || second > max) {
        return false;
      }
      for (int k = 2; k <= trailing; k++) {
        int next = bytes[i + k] & 0xFF;
        if (next < 0x80 || next > 0xBF) {
          return false;
        }
      }
      i += trailing + 1;
    }
    return true;
  }
}
