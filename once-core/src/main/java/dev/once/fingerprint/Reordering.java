package dev.once.fingerprint;

import java.util.Arrays;

/**
 * The objects whose members must be written in another order than they were read, and the pass that
 * writes the final output from them.
 *
 * <p>Moving an object's members when it closes would move everything nested in it again at every
 * enclosing object that also needs sorting: a typical body is moved several times over. Instead
 * each such object leaves a <em>plan</em> — where its body lies in the parser's output and its
 * members' texts in sorted order — and nothing moves until the end, when {@link #emit} copies every
 * byte exactly once, following the plans.
 *
 * <p>Plans never overlap except by nesting, and positions in the output never change while parsing,
 * except that an excluded item is cut off: {@link #discardFrom} then drops the plans inside it.
 */
final class Reordering {

  /** Slack {@link #copy} may read past a piece in the source and write past it in the output. */
  static final int SLACK = Long.BYTES;

  /** The flag of a pending range that must be preceded by a comma. */
  private static final int COMMA = 1;

  // Plans, flat: bodyStart, bodyEnd, memberCount, holdsPlans (0 or 1), then memberCount pairs
  // (textStart, textEnd).
  private int[] plans = new int[256];
  private int length;
  // Where each plan starts in `plans`, in the order the objects closed.
  private int[] offsets = new int[32];
  private int count;
  // For emit(): the plans by body start, and a stack of ranges still to copy with their flags.
  private long[] byStart = new long[32];
  private int[] pending = new int[96];

  void clear() {
    length = 0;
    count = 0;
  }

  boolean isEmpty() {
    return count == 0;
  }

  /** Returns the number of plans so far. */
  int size() {
    return count;
  }

  /**
   * Starts the plan of an object whose body is {@code out[bodyStart, bodyEnd)}; {@code holdsPlans}
   * says whether objects inside it have plans (if not, its members are copied straight away).
   */
  void begin(int bodyStart, int bodyEnd, boolean holdsPlans) {
    if (count == offsets.length) {
      offsets = Arrays.copyOf(offsets, count * 2);
    }
    offsets[count++] = length;
    append(bodyStart, bodyEnd);
    append(0, holdsPlans ? 1 : 0);
  }

  /** Adds the next member, in sorted order, to the plan begun last. */
  void member(int textStart, int textEnd) {
    append(textStart, textEnd);
    plans[offsets[count - 1] + 2]++;
  }

  /** Drops the plans of objects at or after {@code position}, which is being cut off the output. */
  void discardFrom(int position) {
    while (count > 0 && plans[offsets[count - 1]] >= position) {
      length = offsets[--count];
    }
  }

  /**
   * Writes {@code src[0, srcLength)} to {@code dst} with every planned object in sorted order.
   * {@code src} must have {@link #SLACK} readable bytes after {@code srcLength}.
   */
  void emit(byte[] src, int srcLength, ByteSink dst) {
    sortByStart();
    dst.reset(srcLength + SLACK);
    int top = push(0, 0, srcLength, 0);
    while (top > 0) {
      top -= 3;
      int from = pending[top];
      int to = pending[top + 1];
      int flags = pending[top + 2];
      if ((flags & COMMA) != 0) {
        dst.write((byte) ',');
      }
      top = emitRange(src, from, to, dst, top);
    }
  }

  /**
   * Copies {@code src[from, to)}, writing the planned objects in it in order: those without plans
   * inside at once, member by member; for the first one with plans inside, it pushes its members
   * and the rest of the range instead, and returns the new top of the stack.
   */
  private int emitRange(byte[] src, int from, int to, ByteSink dst, int top) {
    while (true) {
      // A member's text may start where its own object's body does, so only later plans count.
      int plan = firstPlanAfter(from);
      if (plan < 0 || plans[plan] >= to) {
        copy(src, from, to, dst);
        return top;
      }
      copy(src, from, plans[plan], dst);
      int members = plans[plan + 2];
      if (plans[plan + 3] == 0) {
        for (int m = 0; m < members; m++) {
          if (m > 0) {
            dst.write((byte) ',');
          }
          int pair = plan + 4 + 2 * m;
          copy(src, plans[pair], plans[pair + 1], dst);
        }
        from = plans[plan + 1];
        continue;
      }
      top = push(top, plans[plan + 1], to, 0);
      for (int m = members - 1; m >= 0; m--) {
        int pair = plan + 4 + 2 * m;
        top = push(top, plans[pair], plans[pair + 1], m > 0 ? COMMA : 0);
      }
      return top;
    }
  }

  /**
   * Appends {@code src[from, to)} a word at a time: the pieces are mostly a few dozen bytes, where
   * a byte loop is slow and {@link System#arraycopy} has a call to pay for. The last word may carry
   * up to 7 bytes too many, which the next piece overwrites or which lie past the result's length.
   */
  private static void copy(byte[] src, int from, int to, ByteSink dst) {
    byte[] out = dst.buf;
    int o = dst.len;
    for (int p = from; p < to; p += Long.BYTES) {
      Words.set(out, o + (p - from), Words.get(src, p));
    }
    dst.len = o + (to - from);
  }

  private void sortByStart() {
    if (byStart.length < count) {
      byStart = new long[count];
    }
    for (int i = 0; i < count; i++) {
      byStart[i] = (long) plans[offsets[i]] << 32 | offsets[i];
    }
    Arrays.sort(byStart, 0, count);
  }

  /** Returns the offset of the first plan whose body starts after {@code position}, or -1. */
  private int firstPlanAfter(int position) {
    long key = ((long) position << 32) | 0xFFFFFFFFL; // after every plan starting at position
    int low = 0;
    int n = count;
    while (n > 0) { // written so that the JIT can use conditional moves instead of branches
      int half = n >>> 1;
      boolean before = byStart[low + half] < key;
      low = before ? low + half + 1 : low;
      n = before ? n - half - 1 : half;
    }
    return low < count ? (int) byStart[low] : -1;
  }

  private int push(int top, int from, int to, int flags) {
    if (top + 3 > pending.length) {
      pending = Arrays.copyOf(pending, pending.length * 2);
    }
    pending[top] = from;
    pending[top + 1] = to;
    pending[top + 2] = flags;
    return top + 3;
  }

  private void append(int a, int b) {
    if (length + 2 > plans.length) {
      plans = Arrays.copyOf(plans, plans.length * 2);
    }
    plans[length++] = a;
    plans[length++] = b;
  }

  /** Lets go of arrays a huge input made grow past {@code limit} bytes. */
  void shrinkTo(int limit) {
    if (plans.length * 4 > limit) {
      plans = new int[256];
      offsets = new int[32];
      byStart = new long[32];
      pending = new int[96];
    }
    clear();
  }
}
