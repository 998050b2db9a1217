package dev.once.fingerprint;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Collection;
import org.jspecify.annotations.Nullable;

/**
 * The excluded JSON pointers as a tree of reference tokens, walked by the parser as it descends so
 * that checking a member costs one short scan instead of building the member's path.
 *
 * <p>A node is terminal when a pointer ends there: the value at that place is dropped, whatever
 * pointers go deeper.
 */
final class ExclusionTree {

  private static final ExclusionTree[] NO_CHILDREN = new ExclusionTree[0];

  private boolean terminal;
  private byte[][] names = new byte[0][];
  private int[] indexes = new int[0];
  private ExclusionTree[] children = NO_CHILDREN;

  /** Returns the tree of these pointers, or {@code null} when there are none. */
  static @Nullable ExclusionTree of(Collection<JsonPointer> pointers) {
    if (pointers.isEmpty()) {
      return null;
    }
    ExclusionTree root = new ExclusionTree();
    for (JsonPointer pointer : pointers) {
      ExclusionTree node = root;
      for (String token : pointer.tokens()) {
        node = node.childFor(token);
      }
      node.terminal = true;
    }
    return root;
  }

  boolean terminal() {
    return terminal;
  }

  /** Returns the node for the member whose UTF-8 name is {@code key[start, start+length)}. */
  @Nullable ExclusionTree member(byte[] key, int start, int length) {
    for (int i = 0; i < names.length; i++) {
      if (Arrays.equals(names[i], 0, names[i].length, key, start, start + length)) {
        return children[i];
      }
    }
    return null;
  }

  /** Returns the node for the array element at {@code index}. */
  @Nullable ExclusionTree element(int index) {
    for (int i = 0; i < indexes.length; i++) {
      if (indexes[i] == index) {
        return children[i];
      }
    }
    return null;
  }

  private ExclusionTree childFor(String token) {
    byte[] name = token.getBytes(StandardCharsets.UTF_8);
    for (int i = 0; i < names.length; i++) {
      if (Arrays.equals(names[i], name)) {
        return children[i];
      }
    }
    int n = names.length;
    names = Arrays.copyOf(names, n + 1);
    indexes = Arrays.copyOf(indexes, n + 1);
    children = Arrays.copyOf(children, n + 1);
    names[n] = name;
    indexes[n] = arrayIndex(token);
    children[n] = new ExclusionTree();
    return children[n];
  }

  /** RFC 6901 array indexes are "0" or digits without a leading zero; anything else is -1. */
  private static int arrayIndex(String token) {
    if (token.isEmpty() || token.length() > 9 || (token.charAt(0) == '0' && token.length() > 1)) {
      return -1;
    }
    for (int i = 0; i < token.length(); i++) {
      if (token.charAt(i) < '0' || token.charAt(i) > '9') {
        return -1;
      }
    }
    return Integer.parseInt(token);
  }
}
