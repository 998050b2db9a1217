package dev.once.fingerprint;

import java.util.Arrays;

/**
 * The members of the objects being parsed, as a stack of flat int records: where each name's
 * decoded UTF-8 bytes lie and where its canonical {@code "name":value} text lies in the output.
 * When an object closes, its members are sorted by name and, only if they were not already in
 * order, their texts are moved into that order.
 *
 * <p>A name is usually read where it was written, between the quotes in the output, which holds
 * exactly its UTF-8 bytes unless it needed escapes: a <em>key reference</em> {@code >= 0} is such
 * an output offset. Escaped names, and names of excluded members whose text is cut off again, are
 * decoded into a separate key buffer: a negative key reference {@code ~offset} points there.
 */
final class MemberTable {

  private static final int KEY_START = 0;
  private static final int KEY_LENGTH = 1;
  private static final int TEXT_START = 2;
  private static final int TEXT_END = 3;
  private static final int INPUT_OFFSET = 4;
  private static final int WIDTH = 5;

  /** Marks a member whose text was dropped because a pointer excludes it. */
  private static final int EXCLUDED = -1;

  private int[] records = new int[WIDTH * 64];

  /** Per member, the first 8 bytes of its name as {@link Utf16Order#prefix} packs them. */
  private long[] prefixes = new long[64];

  private int size;
  private int[] order = new int[64];
  private int[] mergeSpace = new int[64];

  int size() {
    return size;
  }

  void truncate(int newSize) {
    size = newSize;
  }

  /**
   * Records a member whose name, {@code keyLength} bytes at {@code keyBuf[keyStart]}, has been
   * read; its value's end comes with {@link #end}. A name in the output ({@code keyRef >= 0}) is
   * followed by at least 8 readable bytes, as the output always has headroom.
   */
  void add(byte[] keyBuf, int keyStart, int keyRef, int keyLength, int textStart, int inputOffset) {
    if (size == prefixes.length) {
      records = Arrays.copyOf(records, records.length * 2);
      prefixes = Arrays.copyOf(prefixes, prefixes.length * 2);
    }
    prefixes[size] = Utf16Order.prefix(keyBuf, keyStart, keyLength, keyRef >= 0);
    int r = size++ * WIDTH;
    records[r + KEY_START] = keyRef;
    records[r + KEY_LENGTH] = keyLength;
    records[r + TEXT_START] = textStart;
    records[r + INPUT_OFFSET] = inputOffset;
  }

  /** Moves the last member's key reference, when its name is copied to the key buffer. */
  void rekeyLast(int keyRef) {
    records[(size - 1) * WIDTH + KEY_START] = keyRef;
  }

  /** Ends the last member's text at {@code textEnd}, or marks it excluded when textEnd is -1. */
  void end(int textEnd) {
    records[(size - 1) * WIDTH + TEXT_END] = textEnd;
  }

  /**
   * Compares the names of members {@code a} and {@code b} in UTF-16 code unit order: by their
   * prefixes, which settles almost every pair, else byte by byte.
   */
  int compare(int a, int b, byte[] out, byte[] keys) {
    int byPrefix = Long.compareUnsigned(prefixes[a], prefixes[b]);
    if (byPrefix != 0) {
      return byPrefix;
    }
    int la = records[a * WIDTH + KEY_LENGTH];
    int lb = records[b * WIDTH + KEY_LENGTH];
    if (la <= Long.BYTES && lb <= Long.BYTES) {
      return la - lb;
    }
    return compareKeys(a, b, out, keys);
  }

  private int compareKeys(int a, int b, byte[] out, byte[] keys) {
    int ka = records[a * WIDTH + KEY_START];
    int kb = records[b * WIDTH + KEY_START];
    return Utf16Order.compare(
        ka >= 0 ? out : keys,
        ka >= 0 ? ka : ~ka,
        records[a * WIDTH + KEY_LENGTH],
        kb >= 0 ? out : keys,
        kb >= 0 ? kb : ~kb,
        records[b * WIDTH + KEY_LENGTH]);
  }

  int inputOffset(int member) {
    return records[member * WIDTH + INPUT_OFFSET];
  }

  /**
   * Sorts members {@code [first, size)} by name, rejects a repeated name, and records the plan of
   * their object, whose body is {@code out[bodyStart, bodyEnd)}, without the excluded members;
   * {@code holdsPlans} says whether objects inside it have plans of their own.
   */
  void plan(
      int first,
      int bodyStart,
      int bodyEnd,
      byte[] out,
      byte[] keys,
      Reordering reordering,
      boolean holdsPlans) {
    int count = size - first;
    sort(first, count, out, keys);
    for (int i = 1; i < count; i++) {
      if (compare(order[i - 1], order[i], out, keys) == 0) {
        int later = Math.max(inputOffset(order[i - 1]), inputOffset(order[i]));
        throw new InvalidJsonException("duplicate member name", later);
      }
    }
    reordering.begin(bodyStart, bodyEnd, holdsPlans);
    for (int i = 0; i < count; i++) {
      int r = order[i] * WIDTH;
      if (records[r + TEXT_END] != EXCLUDED) {
        reordering.member(records[r + TEXT_START], records[r + TEXT_END]);
      }
    }
  }

  /** Fills {@code order[0, count)} with the members sorted by name: a stable merge sort. */
  private void sort(int first, int count, byte[] out, byte[] keys) {
    if (order.length < count) {
      order = new int[count];
      mergeSpace = new int[count];
    }
    for (int i = 0; i < count; i++) {
      order[i] = first + i;
    }
    mergeSort(0, count, out, keys);
  }

  private void mergeSort(int from, int to, byte[] out, byte[] keys) {
    if (to - from <= 8) {
      insertionSort(from, to, out, keys);
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(from, mid, out, keys);
    mergeSort(mid, to, out, keys);
    if (compare(order[mid - 1], order[mid], out, keys) <= 0) {
      return;
    }
    System.arraycopy(order, from, mergeSpace, from, to - from);
    int i = from;
    int j = mid;
    for (int k = from; k < to; k++) {
      if (j >= to || (i < mid && compare(mergeSpace[i], mergeSpace[j], out, keys) <= 0)) {
        order[k] = mergeSpace[i++];
      } else {
        order[k] = mergeSpace[j++];
      }
    }
  }

  private void insertionSort(int from, int to, byte[] out, byte[] keys) {
    for (int i = from + 1; i < to; i++) {
      int member = order[i];
      int j = i - 1;
      while (j >= from && compare(order[j], member, out, keys) > 0) {
        order[j + 1] = order[j];
        j--;
      }
      order[j + 1] = member;
    }
  }

  /** Lets go of buffers a huge input made grow past {@code limit} bytes. */
  void shrinkTo(int limit) {
    if (records.length * 4 > limit) {
      records = new int[WIDTH * 64];
      prefixes = new long[64];
      order = new int[64];
      mergeSpace = new int[64];
    }
    size = 0;
  }
}
