package dev.once.http;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * An immutable, ordered list of HTTP header fields with case-insensitive lookup. Order and the
 * original spelling of names are kept, so a replayed response looks like the recorded one.
 */
public final class Headers implements Iterable<Headers.Field> {

  /**
   * The fields that describe one connection, never the message (RFC 9110 §7.6.1). Looked up in any
   * case: every message on the proxy path is filtered through it, so no name is lower-cased for it.
   */
  private static final List<String> HOP_BY_HOP =
      List.of(
          "connection",
          "keep-alive",
          "proxy-authenticate",
          "proxy-authorization",
          "proxy-connection",
          "te",
          "trailer",
          "trailers",
          "transfer-encoding",
          "upgrade");

  /**
   * {@link #HOP_BY_HOP} by length: a name is compared, ignoring case, only with those of its own
   * length, and most names of a message (Content-Type, Host, Date) have none.
   */
  private static final String[][] HOP_BY_HOP_BY_LENGTH = byLength(HOP_BY_HOP);

  /** No headers. */
  public static final Headers EMPTY = new Headers(List.of());

  /**
   * One header field.
   *
   * @param name the field name as sent
   * @param value the field value
   */
  public record Field(String name, String value) {
    public Field {
      Objects.requireNonNull(name, "name");
      Objects.requireNonNull(value, "value");
      if (name.isEmpty()) {
        throw new IllegalArgumentException("header name must not be empty");
      }
    }
  }

  private final List<Field> fields;

  private Headers(List<Field> fields) {
    this.fields = fields;
  }

  /** Headers from alternating names and values: {@code of("Content-Type", "application/json")}. */
  public static Headers of(String... namesAndValues) {
    if (namesAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("headers need a value for every name");
    }
    Builder b = builder();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      b.add(namesAndValues[i], namesAndValues[i + 1]);
    }
    return b.build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** The first value of the named field. */
  public Optional<String> first(String name) {
    for (Field f : fields) {
      if (f.name.equalsIgnoreCase(name)) {
        return Optional.of(f.value);
      }
    }
    return Optional.empty();
  }

  /** Every value of the named field, in order. */
  public List<String> all(String name) {
    List<String> values = new ArrayList<>(1);
    for (Field f : fields) {
      if (f.name.equalsIgnoreCase(name)) {
        values.add(f.value);
      }
    }
    return values;
  }

  /** These headers without the fields whose (lower-cased) name matches. */
  public Headers without(Predicate<String> lowerCaseName) {
    List<Field> kept = new ArrayList<>(fields.size());
    for (Field f : fields) {
      if (!lowerCaseName.test(f.name.toLowerCase(java.util.Locale.ROOT))) {
        kept.add(f);
      }
    }
    return kept.size() == fields.size() ? this : new Headers(Collections.unmodifiableList(kept));
  }

  /**
   * These headers without the hop-by-hop fields: the fixed ones of RFC 9110 §7.6.1 and every field
   * named in {@code Connection}. What a proxy forwards, and what may ever be recorded or replayed.
   */
  public Headers endToEnd() {
    // Names a Connection field adds to the fixed ones; null while it adds none, as in most messages
    // (Connection: keep-alive or close names nothing new).
    java.util.Set<String> named = null;
    for (Field f : fields) {
      if (f.name.equalsIgnoreCase("Connection")) {
        for (String token : f.value.split(",")) {
          String name = token.trim();
          if (!hopByHop(name)) {
            if (named == null) {
              named = new java.util.TreeSet<>(String.CASE_INSENSITIVE_ORDER);
            }
            named.add(name);
          }
        }
      }
    }
    List<Field> kept = null;
    for (int i = 0; i < fields.size(); i++) {
      Field f = fields.get(i);
      if (hopByHop(f.name) || (named != null && named.contains(f.name))) {
        if (kept == null) {
          kept = new ArrayList<>(fields.subList(0, i));
        }
      } else if (kept != null) {
        kept.add(f);
      }
    }
    // Most messages carry no hop-by-hop field: they are returned as they are, nothing copied.
    return kept == null ? this : new Headers(Collections.unmodifiableList(kept));
  }

  /** Whether {@code name} is one of the fixed hop-by-hop fields, in any case. */
  private static boolean hopByHop(String name) {
    if (name.length() >= HOP_BY_HOP_BY_LENGTH.length) {
      return false;
    }
    for (String fixed : HOP_BY_HOP_BY_LENGTH[name.length()]) {
      if (fixed.equalsIgnoreCase(name)) {
        return true;
      }
    }
    return false;
  }

  private static String[][] byLength(List<String> names) {
    int longest = names.stream().mapToInt(String::length).max().orElse(0);
    List<List<String>> byLength = new ArrayList<>();
    for (int n = 0; n <= longest; n++) {
      byLength.add(new ArrayList<>());
    }
    for (String name : names) {
      byLength.get(name.length()).add(name);
    }
    return byLength.stream().map(l -> l.toArray(String[]::new)).toArray(String[][]::new);
  }

  /** These headers plus one more field at the end. */
  public Headers with(String name, String value) {
    List<Field> more = new ArrayList<>(fields.size() + 1);
    more.addAll(fields);
    more.add(new Field(name, value));
    return new Headers(Collections.unmodifiableList(more));
  }

  /**
   * The fields set on a message after {@code before} was taken from it: per name, nothing if its
   * values are as they were, the values appended after them, or all of them if they were replaced.
   * An adapter records only what the handler set on a response, never what outer code (a request
   * id, CORS headers) had put there before it ran (DESIGN §4).
   */
  public Headers since(Headers before) {
    Builder set = builder();
    java.util.Set<String> seen = new java.util.HashSet<>();
    for (Field f : fields) {
      if (seen.add(f.name.toLowerCase(java.util.Locale.ROOT))) {
        List<String> was = before.all(f.name);
        List<String> now = all(f.name);
        if (!now.equals(was)) {
          boolean appended = now.size() > was.size() && now.subList(0, was.size()).equals(was);
          for (String value : appended ? now.subList(was.size(), now.size()) : now) {
            set.add(f.name, value);
          }
        }
      }
    }
    return set.build();
  }

  public List<Field> fields() {
    return fields;
  }

  public int size() {
    return fields.size();
  }

  @Override
  public Iterator<Field> iterator() {
    return fields.iterator();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Headers h && fields.equals(h.fields);
  }

  @Override
  public int hashCode() {
    return fields.hashCode();
  }

  @Override
  public String toString() {
    // Names only: values may carry credentials.
    List<String> names = new ArrayList<>(fields.size());
    for (Field f : fields) {
      names.add(f.name);
    }
    return "Headers" + names;
  }

  /** Builds {@link Headers}. */
  public static final class Builder {
    private final List<Field> fields = new ArrayList<>();

    private Builder() {}

    public Builder add(String name, String value) {
      fields.add(new Field(name, value));
      return this;
    }

    public Headers build() {
      return fields.isEmpty()
          ? EMPTY
          : new Headers(Collections.unmodifiableList(new ArrayList<>(fields)));
    }
  }
}
