package dev.once.fingerprint;

import java.util.Arrays;

/**
 * The members of the objects being parsed, as a stack of flat int records: where each name's
 * decoded UTF-8 bytes lie in the key buffer and where its canonical {@code "name":value} text lies
 * in the output. When an object closes, its members are sorted by name and, only if they were not
 * already in order, their texts are moved into that order.
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
  private int size;
  private int[] order = new int[64];
  private int[] mergeSpace = new int[64];
  private final ByteSink moved = new ByteSink(256);

  int size() {
    return size;
  }

  void truncate(int newSize) {
    size = newSize;
  }

  /** Records a member whose name has been read; its value's end comes with {@link #end}. */
  void add(int keyStart, int keyLength, int textStart, int inputOffset) {
    if ((size + 1) * WIDTH > records.length) {
      records = Arrays.copyOf(records, records.length * 2);
    }
    int r = size++ * WIDTH;
    records[r + KEY_START] = keyStart;
    records[r + KEY_LENGTH] = keyLength;
    records[r + TEXT_START] = textStart;
    records[r + INPUT_OFFSET] = inputOffset;
  }

  /** Ends the last member's text at {@code textEnd}, or marks it excluded when textEnd is -1. */
  void end(int textEnd) {
    records[(size - 1) * WIDTH + TEXT_END] = textEnd;
  }

  /** Compares the names of members {@code a} and {@code b} in UTF-16 code unit order. */
  int compare(int a, int b, byte[] keys) {
    int ra = a * WIDTH;
    int rb = b * WIDTH;
    return Utf16Order.compare(keys, records[ra + KEY_START], records[ra + KEY_LENGTH],
        records[rb + KEY_START], records[rb + KEY_LENGTH]);
  }

  int inputOffset(int member) {
    return records[member * WIDTH + INPUT_OFFSET];
  }

  boolean excluded(int member) {
    return records[member * WIDTH + TEXT_END] == EXCLUDED;
  }

  /**
   * Sorts members {@code [first, size)} by name, rejects a repeated name, and rewrites the object's
   * body, which starts at {@code bodyStart} in {@code out}, in sorted order.
   */
  void reorder(int first, int bodyStart, byte[] keys, ByteSink out) {
    int count = size - first;
    sort(first, count, keys);
    for (int i = 1; i < count; i++) {
      if (compare(order[i - 1], order[i], keys) == 0) {
        int later = Math.max(inputOffset(order[i - 1]), inputOffset(order[i]));
        throw new InvalidJsonException("duplicate member name", later);
      }
    }
    int bodyLength = out.len - bodyStart;
    moved.reset(bodyLength);
    moved.write(out.buf, bodyStart, bodyLength);
    out.len = bodyStart;
    boolean wroteOne = false;
    for (int i = 0; i < count; i++) {
      int r = order[i] * WIDTH;
      if (records[r + TEXT_END] == EXCLUDED) {
        continue;
      }
      if (wroteOne) {
        out.write((byte) ',');
      }
      wroteOne = true;
      int start = records[r + TEXT_START];
      out.write(moved.buf, start - bodyStart, records[r + TEXT_END] - start);
    }
  }

  /** Fills {@code order[0, count)} with the members sorted by name: a stable merge sort. */
  private void sort(int first, int count, byte[] keys) {
    if (order.length < count) {
      order = new int[count];
      mergeSpace = new int[count];
    }
    for (int i = 0; i < count; i++) {
      order[i] = first + i;
    }
    mergeSort(0, count, keys);
  }

  private void mergeSort(int from, int to, byte[] keys) {
    if (to - from <= 8) {
      insertionSort(from, to, keys);
      return;
    }
    int mid = (from + to) >>> 1;
    mergeSort(from, mid, keys);
    mergeSort(mid, to, keys);
    if (compare(order[mid - 1], order[mid], keys) <= 0) {
      return;
    }
    System.arraycopy(order, from, mergeSpace, from, to - from);
    int i = from;
    int j = mid;
    for (int k = from; k < to; k++) {
      if (j >= to || (i < mid && compare(mergeSpace[i], mergeSpace[j], keys) <= 0)) {
        order[k] = mergeSpace[i++];
      } else {
        order[k] = mergeSpace[j++];
      }
    }
  }

  private void insertionSort(int from, int to, byte[] keys) {
    for (int i = from + 1; i < to; i++) {
      int member = order[i];
      int j = i - 1;
      while (j >= from && compare(order[j], member, keys) > 0) {
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
      order = new int[64];
      mergeSpace = new int[64];
    }
    moved.shrinkTo(limit, 256);
    size = 0;
  }
}
