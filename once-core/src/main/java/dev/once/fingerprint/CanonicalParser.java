package dev.once.fingerprint;

import org.jspecify.annotations.Nullable;

/**
 * One pass over UTF-8 JSON that checks it is I-JSON and writes its RFC 8785 form.
 *
 * <p>Every value is written in canonical form as it is read, into one output buffer, in input
 * order. Each object member's place is recorded in a {@link MemberTable}; names are compared as
 * they arrive, and only an object whose names came out of order is sorted when it closes, leaving a
 * plan in {@link Reordering}. If any object needed one, {@link #result()} copies the output once
 * more, following the plans. Excluded values are written and then cut off again, so they are still
 * validated.
 *
 * <p>Containers are frames on an explicit stack of at most {@link JsonCanonicalizer#MAX_DEPTH}, not
 * Java calls, so no input can exhaust the thread's stack. The output is sized up front so that
 * every write of a string, a literal or punctuation fits without a check: none of them writes more
 * bytes than it consumes. Numbers can (1e20), so each one re-establishes the room afterwards.
 *
 * <p>Not thread-safe; one instance per thread is reused through {@link Workspace}.
 */
final class CanonicalParser {

  private static final int MAX_DEPTH = JsonCanonicalizer.MAX_DEPTH;

  /** Keeps the buffer sizes, which add headroom to the input's length, from overflowing an int. */
  private static final int MAX_INPUT = Integer.MAX_VALUE - 1024;

  private static final byte[] TRUE = {'t', 'r', 'u', 'e'};
  private static final byte[] FALSE = {'f', 'a', 'l', 's', 'e'};
  private static final byte[] NULL = {'n', 'u', 'l', 'l'};

  /** Every value in canonical form, with object members in input order. */
  private final ByteSink out = new ByteSink(1024);

  /** The output with the plans carried out, when there are any. */
  private final ByteSink reordered = new ByteSink(1024);

  private final Reordering reordering = new Reordering();

  /**
   * The decoded names of open objects' members that cannot be read in the output (see MemberTable).
   */
  private final ByteSink keys = new ByteSink(256);

  private final MemberTable members = new MemberTable();

  private static final byte[] NO_INPUT = new byte[0];

  private byte[] in = NO_INPUT;
  private int pos;
  private int end;

  /** Numbers in their exact form (fingerprints) rather than as the nearest double (RFC 8785). */
  private boolean exactNumbers;

  /** Whether some number's exact form may differ from its JCS form (only set in exact mode). */
  private boolean beyondJcs;

  /**
   * The open containers: {@code frames[1]} is the outermost, {@code frames[depth]} the innermost.
   */
  private final Frame[] frames = new Frame[MAX_DEPTH + 1];

  private int depth;

  /**
   * Canonicalises {@code json}, leaving out the values {@code excluded} points at (null for none),
   * with numbers as RFC 8785 writes them or, if {@code exactNumbers}, in their exact form (see
   * {@link NumberCanonicalizer}).
   *
   * @throws InvalidJsonException if {@code json} is not I-JSON
   */
  void canonicalize(byte[] json, @Nullable ExclusionTree excluded, boolean exactNumbers) {
    if (json.length > MAX_INPUT) {
      throw new InvalidJsonException("input too large to canonicalise", 0);
    }
    in = json;
    pos = 0;
    end = json.length;
    depth = 0;
    this.exactNumbers = exactNumbers;
    beyondJcs = false;
    out.reset(end + NumberCanonicalizer.HEADROOM);
    keys.reset(end);
    members.truncate(0);
    reordering.clear();
    rejectByteOrderMark();
    boolean wholeExcluded = excluded != null && excluded.terminal();
    readDocument(wholeExcluded ? null : excluded);
    if (peekAfterWhitespace() != -1) {
      throw new InvalidJsonException("unexpected data after the JSON value", pos);
    }
    if (wholeExcluded) {
      out.len = 0;
      reordering.clear();
    }
  }

  /**
   * Whether the last input, canonicalised with exact numbers, might have come out differently under
   * RFC 8785: false guarantees the same bytes (every number had at most 15 significant digits and a
   * moderate exponent), true means "possibly" (excluded values count too).
   */
  boolean numbersBeyondJcs() {
    return beyondJcs;
  }

  /** Returns the canonical form of the last input, in {@code buf[0, len)}. */
  ByteSink result() {
    if (reordering.isEmpty()) {
      return out;
    }
    reordering.emit(out.buf, out.len, reordered);
    return reordered;
  }

  /** Lets go of the input and of buffers a huge input made grow past {@code limit} bytes. */
  void release(int limit) {
    in = NO_INPUT;
    out.shrinkTo(limit, 1024);
    reordered.shrinkTo(limit, 1024);
    reordering.shrinkTo(limit);
    keys.shrinkTo(limit, 256);
    members.shrinkTo(limit);
  }

  /**
   * The main loop. Each round reads one value; a value that ends (a scalar, or a container at its
   * closing bracket) is handed to the enclosing container, which either begins its next item or
   * closes too. The innermost container's {@link Frame} is kept in a local, and the common path —
   * scalar, comma, next scalar — makes no call that is not inlined.
   */
  private void readDocument(@Nullable ExclusionTree rootExclusions) {
    ExclusionTree next = rootExclusions;
    Frame top = null;
    while (true) {
      int c = peekAfterWhitespace();
      if (c == '{' || c == '[') {
        top = open(c == '{', next);
        if (!closesAtOnce(top)) {
          next = beginItem(top);
          continue;
        }
        top = close(top);
      } else {
        readScalar(c);
      }
      while (top != null) {
        endItem(top);
        c = peekAfterWhitespace();
        if (c == ',') {
          pos++;
          next = beginItem(top);
          break;
        }
        if (c != (top.object ? '}' : ']')) {
          throw new InvalidJsonException(
              top.object ? "expected ',' or '}'" : "expected ',' or ']'", pos);
        }
        pos++;
        top = close(top);
      }
      if (top == null) {
        return;
      }
    }
  }

  private void readScalar(int c) {
    switch (c) {
      case '"' -> readString();
      case 't' -> literal(TRUE);
      case 'f' -> literal(FALSE);
      case 'n' -> literal(NULL);
      case -1 -> throw new InvalidJsonException("expected a value but the input ended", pos);
      default -> {
        if (c != '-' && (c < '0' || c > '9')) {
          throw new InvalidJsonException("expected a value, found " + describe((byte) c), pos);
        }
        readNumber();
      }
    }
  }

  private void readNumber() {
    int after = NumberCanonicalizer.copyIfPlain(in, pos, end, out);
    if (after < 0) {
      after = NumberCanonicalizer.canonicalizeOther(in, pos, end, out, exactNumbers);
      if (after < 0) {
        after = ~after;
        beyondJcs = true;
      }
      // The only writer that can emit more than it reads (1e20): restore the headroom.
      out.ensure(out.len + (end - after) + NumberCanonicalizer.HEADROOM);
    }
    pos = after;
  }

  private Frame open(boolean object, @Nullable ExclusionTree exclusions) {
    if (depth == MAX_DEPTH) {
      throw new InvalidJsonException("nesting is deeper than " + MAX_DEPTH + " levels", pos);
    }
    Frame frame = frames[++depth];
    if (frame == null) {
      frame = frames[depth] = new Frame();
    }
    out.write(in[pos++]);
    frame.open(object, out.len, members.size(), keys.len, reordering.size(), exclusions);
    return frame;
  }

  private boolean closesAtOnce(Frame frame) {
    int c = peekAfterWhitespace();
    if (c == (frame.object ? '}' : ']')) {
      pos++;
      return true;
    }
    return false;
  }

  /** Writes the closing bracket, sorting an object's members first; returns the parent frame. */
  private @Nullable Frame close(Frame frame) {
    if (frame.object) {
      if (frame.unsorted) {
        members.plan(
            frame.firstMember,
            frame.bodyStart,
            out.len,
            out.buf,
            keys.buf,
            reordering,
            reordering.size() > frame.firstPlan);
      }
      members.truncate(frame.firstMember);
      keys.len = frame.keyMark;
      out.write((byte) '}');
    } else {
      out.write((byte) ']');
    }
    return --depth == 0 ? null : frames[depth];
  }

  /** After a comma or an opening bracket: begins an item; returns the exclusions below it. */
  private @Nullable ExclusionTree beginItem(Frame frame) {
    frame.itemStart = out.len;
    if (frame.written > 0) {
      out.write((byte) ',');
    }
    if (frame.object) {
      return beginMember(frame);
    }
    ExclusionTree node = frame.exclusions;
    return node == null ? enter(frame, null) : enter(frame, node.element(frame.index));
  }

  private @Nullable ExclusionTree beginMember(Frame frame) {
    if (peekAfterWhitespace() != '"') {
      throw new InvalidJsonException("expected a member name", pos);
    }
    int nameOffset = pos;
    int textStart = out.len;
    int keyRef = textStart + 1;
    if (readString()) {
      keyRef = ~keys.len;
      JsonStrings.unescapeCanonical(out.buf, textStart + 1, out.len - 1, keys);
    }
    byte[] keyBuf = keyRef >= 0 ? out.buf : keys.buf;
    int keyStart = keyRef >= 0 ? keyRef : ~keyRef;
    int keyLength = keyRef >= 0 ? out.len - 1 - keyRef : keys.len - keyStart;
    if (peekAfterWhitespace() != ':') {
      throw new InvalidJsonException("expected ':' after a member name", pos);
    }
    pos++;
    out.write((byte) ':');
    members.add(keyBuf, keyStart, keyRef, keyLength, textStart, nameOffset);
    int last = members.size() - 1;
    if (last > frame.firstMember) {
      int order = members.compare(last - 1, last, out.buf, keys.buf);
      if (order == 0) {
        throw new InvalidJsonException("duplicate member name", nameOffset);
      }
      frame.unsorted |= order > 0;
    }
    if (frame.exclusions == null) {
      return enter(frame, null);
    }
    ExclusionTree next = enter(frame, frame.exclusions.member(keyBuf, keyStart, keyLength));
    if (frame.itemExcluded && keyRef >= 0) {
      // The name is about to be cut off the output, but later names must still be compared to it.
      members.rekeyLast(~keys.len);
      keys.write(out.buf, keyStart, keyLength);
    }
    return next;
  }

  /** Notes whether the item is excluded; returns the exclusions below it, for a container. */
  private static @Nullable ExclusionTree enter(Frame frame, @Nullable ExclusionTree child) {
    boolean excluded = child != null && child.terminal();
    frame.itemExcluded = excluded;
    return excluded ? null : child;
  }

  /** After an item's value: cuts it off again if excluded, or counts it. */
  private void endItem(Frame frame) {
    if (frame.itemExcluded) {
      out.len = frame.itemStart;
      reordering.discardFrom(frame.itemStart);
    } else {
      frame.written++;
    }
    if (frame.object) {
      members.end(frame.itemExcluded ? -1 : out.len);
    }
    frame.index++;
  }

  private void literal(byte[] word) {
    int n = word.length;
    if (end - pos < n) {
      throw new InvalidJsonException("expected a value, found " + describe(in[pos]), pos);
    }
    for (int i = 1; i < n; i++) {
      if (in[pos + i] != word[i]) {
        throw new InvalidJsonException("expected a value, found " + describe(in[pos]), pos);
      }
    }
    out.write(word, 0, n);
    pos += n;
  }

  /**
   * Reads the string at {@link #pos} and writes it escaped as RFC 8785 §3.2.2.2 says. Returns
   * whether the written string holds a backslash, that is, whether its content differs from its
   * decoded UTF-8 bytes.
   *
   * <p>Most names and many values are plain and shorter than 8 bytes: when the first word after the
   * quote holds the closing quote and nothing else to stop at, it is copied whole. This part is
   * small enough to be inlined where strings are read; the rest is {@link #readLongString}.
   */
  private boolean readString() {
    int p = pos + 1;
    if (p + Long.BYTES <= end) {
      long word = Words.get(in, p);
      long stops = JsonStrings.stopBytes(word);
      int n = Long.numberOfTrailingZeros(stops) >>> 3;
      if (stops != 0 && in[p + n] == '"') {
        int o = out.len;
        out.buf[o] = '"';
        Words.set(
            out.buf, o + 1, word); // the content, the closing quote, and bytes written over later
        out.len = o + n + 2;
        pos = p + n + 1;
        return false;
      }
    }
    return readLongString();
  }

  private boolean readLongString() {
    int start = pos;
    byte[] src = in;
    int p = start + 1;
    out.write((byte) '"');
    int contentStart = out.len;
    boolean escaped = false;
    while (true) {
      int stop = JsonStrings.copyPlain(src, p, end, out.buf, out.len);
      out.len += stop - p;
      p = stop;
      if (p >= end) {
        throw new InvalidJsonException("unterminated string", start);
      }
      byte b = src[p];
      if (b == '"') {
        break;
      } else if (b == '\\') {
        p = JsonStrings.escape(src, p, end, out);
        escaped = true;
      } else if (b < 0) {
        int n = JsonStrings.utf8Length(src, p, end);
        out.write(src, p, n);
        p += n;
      } else {
        throw new InvalidJsonException("a control character in a string must be escaped", p);
      }
    }
    out.write((byte) '"');
    pos = p + 1;
    return escaped && JsonStrings.hasBackslash(out.buf, contentStart, out.len - 1);
  }

  /** Skips whitespace; returns the byte there, or -1 at the end of the input. */
  private int peekAfterWhitespace() {
    int p = pos;
    byte[] src = in;
    while (p < end) {
      byte b = src[p];
      if (b != ' ' && b != '\n' && b != '\r' && b != '\t') {
        pos = p;
        return b & 0xFF;
      }
      p++;
    }
    pos = p;
    return -1;
  }

  /** RFC 8259 §8.1 forbids adding one; we do not guess, so a body with one hashes raw. */
  private void rejectByteOrderMark() {
    if (end >= 3 && in[0] == (byte) 0xEF && in[1] == (byte) 0xBB && in[2] == (byte) 0xBF) {
      throw new InvalidJsonException("a byte order mark is not allowed", 0);
    }
  }

  private static String describe(byte b) {
    return b >= 0x20 && b < 0x7F ? "'" + (char) b + "'" : String.format("byte 0x%02x", b & 0xFF);
  }
}
