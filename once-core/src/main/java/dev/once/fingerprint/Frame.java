package dev.once.fingerprint;

import org.jspecify.annotations.Nullable;

/**
 * The state of one open array or object while {@link CanonicalParser} is inside it. Frames are
 * preallocated per depth and reused, so opening a container allocates nothing.
 */
final class Frame {

  boolean object;

  /** Where the body (after the bracket) starts in the output. */
  int bodyStart;

  /** Items written so far, which decides whether the next one needs a comma. */
  int written;

  /** The next array index. */
  int index;

  /** Where the current item, including its comma, starts in the output. */
  int itemStart;

  /** Whether the current item is excluded and will be cut off when it ends. */
  boolean itemExcluded;

  /** Whether some member name came before a smaller one, so the members must be reordered. */
  boolean unsorted;

  int firstMember;
  int keyMark;

  /** The number of reordering plans when this container opened: later ones lie inside it. */
  int firstPlan;

  /** The exclusions below this container, or null. */
  @Nullable ExclusionTree exclusions;

  void open(
      boolean isObject,
      int bodyStart,
      int firstMember,
      int keyMark,
      int firstPlan,
      @Nullable ExclusionTree exclusions) {
    this.object = isObject;
    this.bodyStart = bodyStart;
    this.written = 0;
    this.index = 0;
    this.unsorted = false;
    this.firstMember = firstMember;
    this.keyMark = keyMark;
    this.firstPlan = firstPlan;
    this.exclusions = exclusions;
  }
}
