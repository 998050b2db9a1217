package dev.once.fingerprint;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Randomised checks, with numbers as RFC 8785 writes them and exact: many spellings of one random
 * document canonicalise to the same bytes, and no mutation of valid JSON makes the canonicaliser
 * throw anything but InvalidJsonException.
 */
class CanonicalizerFuzzTest {

  private static final String PUNCTUATION = "{}[]\",:\\-.e0u";

  @Test
  void everySpellingOfARandomDocumentCanonicalisesTheSame() {
    Random random = new Random(8785);
    for (int i = 0; i < 3_000; i++) {
      Object document = randomValue(random, 0);
      String one = spell(document, random);
      String other = spell(document, random);
      byte[] first = JsonCanonicalizer.canonicalize(one.getBytes(UTF_8));
      byte[] second = JsonCanonicalizer.canonicalize(other.getBytes(UTF_8));
      assertThat(new String(second, UTF_8)).isEqualTo(new String(first, UTF_8));
      assertThat(JsonCanonicalizer.canonicalize(first)).isEqualTo(first);
      byte[] firstExact = JsonCanonicalizer.canonicalizeExact(one.getBytes(UTF_8));
      byte[] secondExact = JsonCanonicalizer.canonicalizeExact(other.getBytes(UTF_8));
      assertThat(new String(secondExact, UTF_8)).isEqualTo(new String(firstExact, UTF_8));
      assertThat(JsonCanonicalizer.canonicalizeExact(firstExact)).isEqualTo(firstExact);
    }
  }

  @Test
  void excludingPointersIsTheSameAsLeavingTheValuesOut() {
    Random random = new Random(6901);
    for (int i = 0; i < 3_000; i++) {
      Object document = randomValue(random, 0);
      Set<String> pointers = new HashSet<>();
      Object without = withoutRandomValues(document, "", pointers, random);
      if (without == null) {
        continue; // the whole document was picked
      }
      byte[] excluded =
          JsonCanonicalizer.canonicalize(spell(document, random).getBytes(UTF_8), pointers);
      byte[] expected = JsonCanonicalizer.canonicalize(spell(without, random).getBytes(UTF_8));
      assertThat(new String(excluded, UTF_8))
          .as("%s", pointers)
          .isEqualTo(new String(expected, UTF_8));
    }
  }

  /** Copies the value without randomly picked members and elements, adding their pointers. */
  private static Object withoutRandomValues(
      Object value, String pointer, Set<String> pointers, Random random) {
    if (random.nextInt(8) == 0) {
      pointers.add(pointer);
      return null;
    }
    if (value instanceof Map<?, ?> map) {
      Map<String, Object> copy = new LinkedHashMap<>();
      map.forEach(
          (name, member) -> {
            String escaped = ((String) name).replace("~", "~0").replace("/", "~1");
            Object kept = withoutRandomValues(member, pointer + "/" + escaped, pointers, random);
            if (kept != null) {
              copy.put((String) name, kept);
            }
          });
      return copy;
    }
    if (value instanceof List<?> list) {
      List<Object> copy = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        Object kept = withoutRandomValues(list.get(i), pointer + "/" + i, pointers, random);
        if (kept != null) {
          copy.add(kept);
        }
      }
      return copy;
    }
    return value;
  }

  @Test
  void mutatedInputIsEitherCanonicalisedOrRejectedAsInvalidJson() {
    Random random = new Random(42);
    for (int i = 0; i < 20_000; i++) {
      byte[] input = mutate(spell(randomValue(random, 0), random).getBytes(UTF_8), random);
      try {
        byte[] canonical = JsonCanonicalizer.canonicalize(input);
        assertThat(JsonCanonicalizer.canonicalize(canonical)).isEqualTo(canonical);
        byte[] exact = JsonCanonicalizer.canonicalizeExact(input);
        assertThat(JsonCanonicalizer.canonicalizeExact(exact)).isEqualTo(exact);
      } catch (InvalidJsonException expected) {
        assertThat(expected.offset()).isBetween(0, input.length);
      } catch (RuntimeException | StackOverflowError e) {
        fail("unexpected " + e + " for " + new String(input, UTF_8), e);
      }
      Fingerprinter.defaults().json(input, "POST");
    }
  }

  private static byte[] mutate(byte[] input, Random random) {
    byte[] copy = input.clone();
    int edits = 1 + random.nextInt(3);
    for (int e = 0; e < edits && copy.length > 0; e++) {
      int at = random.nextInt(copy.length);
      switch (random.nextInt(3)) {
        case 0 -> copy[at] = (byte) random.nextInt(256);
        case 1 -> copy[at] = (byte) PUNCTUATION.charAt(random.nextInt(PUNCTUATION.length()));
        default -> {
          byte[] shorter = new byte[copy.length - 1];
          System.arraycopy(copy, 0, shorter, 0, at);
          System.arraycopy(copy, at + 1, shorter, at, copy.length - at - 1);
          copy = shorter;
        }
      }
    }
    return copy;
  }

  private static Object randomValue(Random random, int depth) {
    int kind = random.nextInt(depth > 4 ? 4 : 6);
    return switch (kind) {
      case 0 -> randomString(random);
      case 1 -> randomNumber(random);
      case 2 -> List.of(Boolean.TRUE, Boolean.FALSE, "null-literal").get(random.nextInt(3));
      case 3 -> randomNumber(random);
      case 4 -> {
        List<Object> list = new ArrayList<>();
        for (int i = random.nextInt(5); i > 0; i--) {
          list.add(randomValue(random, depth + 1));
        }
        yield list;
      }
      default -> {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = random.nextInt(6); i > 0; i--) {
          map.put(randomString(random), randomValue(random, depth + 1));
        }
        yield map;
      }
    };
  }

  private static String randomString(Random random) {
    String alphabet = "abcAB \"\\/~\n\t\u0001\u007féü€\u2028\uE000\uFFFF";
    StringBuilder s = new StringBuilder();
    for (int i = random.nextInt(6); i > 0; i--) {
      if (random.nextInt(8) == 0) {
        s.appendCodePoint(random.nextBoolean() ? 0x1F600 : 0x10000 + random.nextInt(0x100000));
      } else {
        s.append(alphabet.charAt(random.nextInt(alphabet.length())));
      }
    }
    return s.toString();
  }

  private static BigDecimal randomNumber(Random random) {
    return switch (random.nextInt(5)) {
      case 0 -> BigDecimal.valueOf(random.nextInt(2_000_001) - 1_000_000);
      case 1 -> BigDecimal.valueOf(random.nextInt(100_000), random.nextInt(5));
      case 2 ->
          new BigDecimal(
              Double.toString(random.nextGaussian() * Math.pow(10, random.nextInt(60) - 30)));
      case 3 ->
          new BigDecimal(new BigInteger(80, random), random.nextInt(40) - 20); // beyond a double
      default ->
          new BigDecimal(Double.toString(Double.longBitsToDouble(random.nextLong() & ~(1L << 62))));
    };
  }

  /** Writes the value with random member order, whitespace, escapes and number spellings. */
  private static String spell(Object value, Random random) {
    StringBuilder out = new StringBuilder();
    spell(value, random, out);
    return out.toString();
  }

  private static void spell(Object value, Random random, StringBuilder out) {
    space(random, out);
    if (value instanceof Map<?, ?> map) {
      List<Map.Entry<?, ?>> entries = new ArrayList<>(map.entrySet());
      Collections.shuffle(entries, random);
      out.append('{');
      for (int i = 0; i < entries.size(); i++) {
        out.append(i == 0 ? "" : ",");
        space(random, out);
        spellString((String) entries.get(i).getKey(), random, out);
        space(random, out);
        out.append(':');
        spell(entries.get(i).getValue(), random, out);
      }
      space(random, out);
      out.append('}');
    } else if (value instanceof List<?> list) {
      out.append('[');
      for (int i = 0; i < list.size(); i++) {
        out.append(i == 0 ? "" : ",");
        spell(list.get(i), random, out);
      }
      space(random, out);
      out.append(']');
    } else if (value instanceof String s) {
      if (s.equals("null-literal")) {
        out.append("null");
      } else {
        spellString(s, random, out);
      }
    } else if (value instanceof BigDecimal number) {
      spellNumber(number, random, out);
    } else {
      out.append(value);
    }
    space(random, out);
  }

  private static void spellNumber(BigDecimal number, Random random, StringBuilder out) {
    BigDecimal padded = number.setScale(number.scale() + random.nextInt(3));
    switch (random.nextInt(3)) {
      case 0 -> out.append(padded.toPlainString());
      case 1 ->
          out.append(padded.unscaledValue())
              .append(random.nextBoolean() ? 'e' : 'E')
              .append(-padded.scale());
      default -> out.append(number.toString().replace("E+", random.nextBoolean() ? "e+" : "E"));
    }
  }

  private static void spellString(String s, Random random, StringBuilder out) {
    out.append('"');
    for (int i = 0; i < s.length(); i += Character.charCount(s.codePointAt(i))) {
      int cp = s.codePointAt(i);
      boolean mustEscape = cp < 0x20 || cp == '"' || cp == '\\';
      if (mustEscape || random.nextInt(4) == 0) {
        for (char c : Character.toChars(cp)) {
          out.append(String.format(random.nextBoolean() ? "\\u%04x" : "\\u%04X", (int) c));
        }
      } else {
        out.appendCodePoint(cp);
      }
    }
    out.append('"');
  }

  private static void space(Random random, StringBuilder out) {
    if (random.nextInt(3) == 0) {
      out.append(" \t\n\r".charAt(random.nextInt(4)));
    }
  }
}
