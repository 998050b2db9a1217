package dev.once.fingerprint;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Set;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class JsonCanonicalizerTest {

  @Test
  void whitespaceGoesAndMembersAreSortedAtEveryLevel() {
    assertThat(canonical(" { \"b\" : [ 3 , { \"z\" : 1 , \"y\" : 2 } ] ,\n\t\"a\" : { } }\r\n"))
        .isEqualTo("{\"a\":{},\"b\":[3,{\"y\":2,\"z\":1}]}");
  }

  @Test
  void arraysKeepTheirOrder() {
    assertThat(canonical("[3, 1, 2, \"b\", \"a\", [], {}]")).isEqualTo("[3,1,2,\"b\",\"a\",[],{}]");
  }

  @Test
  void memberNamesSortByUtf16CodeUnitsNotByCodePoints() {
    // U+1F600 is a surrogate pair (D83D DE00) in UTF-16, so it sorts before U+E000; checked with
    // Node.js.
    assertThat(canonical("{\"\uE000\":1,\"\uD83D\uDE00\":2,\"é\":3,\"a\":4,\"B\":5}"))
        .isEqualTo("{\"B\":5,\"a\":4,\"é\":3,\"\uD83D\uDE00\":2,\"\uE000\":1}");
  }

  @Test
  void namesSharingLongPrefixesSortByTheirWholeLength() {
    assertThat(
            canonical(
                "{\"abcdefgh2\":1,\"abcdefgh1\":2,\"abcdefgh\":3,\"abcdefg\\u0000\":4,\"abcdefgh\\u0000\":5}"))
        .isEqualTo(
            "{\"abcdefg\\u0000\":4,\"abcdefgh\":3,\"abcdefgh\\u0000\":5,\"abcdefgh1\":2,\"abcdefgh2\":1}");
    assertThat(
            canonical("{\"aaaaaaaa\uE000\":1,\"aaaaaaaa\uD83D\uDE00\":2,\"ééééb\":3,\"ééééa\":4}"))
        .isEqualTo("{\"aaaaaaaa\uD83D\uDE00\":2,\"aaaaaaaa\uE000\":1,\"ééééa\":4,\"ééééb\":3}");
    assertThat(canonical("{\"\uE000\uE000\uE000\":1,\"\uD83D\uDE00\uD83D\uDE00\":2}"))
        .isEqualTo("{\"\uD83D\uDE00\uD83D\uDE00\":2,\"\uE000\uE000\uE000\":1}");
  }

  @Test
  void escapedAndLiteralSpellingsOfANameSortTheSame() {
    assertThat(canonical("{\"\\u0062\":1,\"a\\n\":2,\"a\":3}"))
        .isEqualTo("{\"a\":3,\"a\\n\":2,\"b\":1}");
  }

  @Test
  void stringsUseOnlyTheEscapesRfc8785Requires() {
    assertThat(
            canonical("\"\\u0041\\/\\u00e9\\u001F\\u007f\\u2028\\b\\f\\n\\r\\t\\\"\\\\\\u0000\""))
        .isEqualTo("\"A/é\\u001f\u007f\u2028\\b\\f\\n\\r\\t\\\"\\\\\\u0000\"");
  }

  @Test
  void escapedSurrogatePairsBecomeLiteralUtf8() {
    assertThat(canonical("\"\\ud83d\\ude02\"")).isEqualTo("\"\uD83D\uDE02\"");
  }

  @Test
  void anyValueMayBeTheTopLevelOne() {
    assertThat(canonical(" \"x\" ")).isEqualTo("\"x\"");
    assertThat(canonical("42.0")).isEqualTo("42");
    assertThat(canonical("true")).isEqualTo("true");
    assertThat(canonical("null")).isEqualTo("null");
  }

  @Test
  void nestingUpToTheLimitIsAccepted() {
    int n = JsonCanonicalizer.MAX_DEPTH;
    String arrays = "[".repeat(n) + "]".repeat(n);
    assertThat(canonical(arrays)).isEqualTo(arrays);
    String objects = "{\"a\":".repeat(n - 1) + "{}" + "}".repeat(n - 1);
    assertThat(canonical(objects)).isEqualTo(objects);
  }

  @Test
  void nestingBeyondTheLimitIsRejected() {
    int n = JsonCanonicalizer.MAX_DEPTH + 1;
    assertThatThrownBy(() -> canonical("[".repeat(n) + "]".repeat(n)))
        .isInstanceOf(InvalidJsonException.class)
        .hasMessageContaining("offset " + (n - 1))
        .hasMessageContaining("deeper than 512");
  }

  @Test
  void aHundredThousandOpenBracketsAreRejectedQuickly() {
    byte[] deep = "[".repeat(100_000).getBytes(UTF_8);
    long start = System.nanoTime();
    assertThatThrownBy(() -> JsonCanonicalizer.canonicalize(deep))
        .isInstanceOf(InvalidJsonException.class);
    assertThat((System.nanoTime() - start) / 1_000_000).as("milliseconds").isLessThan(500);
  }

  @Test
  void manyMembersInReverseOrderAreSorted() {
    List<String> names =
        IntStream.range(0, 20_000).mapToObj(i -> String.format("k%05d", i)).toList();
    StringBuilder reversed = new StringBuilder("{");
    StringBuilder sorted = new StringBuilder("{");
    for (int i = 0; i < names.size(); i++) {
      reversed
          .append(i == 0 ? "" : ",")
          .append('"')
          .append(names.get(names.size() - 1 - i))
          .append("\":")
          .append(i);
      sorted
          .append(i == 0 ? "" : ",")
          .append('"')
          .append(names.get(i))
          .append("\":")
          .append(names.size() - 1 - i);
    }
    assertThat(canonical(reversed + "}")).isEqualTo(sorted + "}");
  }

  @Test
  void excludedMembersAndElementsAreRemoved() {
    String json =
        "{\"meta\":{\"timestamp\":\"2024-01-01\",\"id\":7},\"items\":[{\"ts\":1,\"sku\":\"a\"},{\"ts\":2}]}";
    assertThat(canonical(json, "/meta/timestamp", "/items/0/ts"))
        .isEqualTo("{\"items\":[{\"sku\":\"a\"},{\"ts\":2}],\"meta\":{\"id\":7}}");
  }

  @Test
  void excludedArrayElementsAreAllChosenFromTheInputAsGiven() {
    assertThat(canonical("[0,1,2,3]", "/0", "/2")).isEqualTo("[1,3]");
  }

  @Test
  void pointerEscapesNameSlashesAndTildes() {
    assertThat(canonical("{\"a/b\":1,\"m~n\":2,\"c\":3}", "/a~1b", "/m~0n")).isEqualTo("{\"c\":3}");
  }

  @Test
  void pointersToMissingPlacesAreIgnored() {
    String json = "{\"a\":[1,{\"b\":2}],\"s\":\"x\"}";
    assertThat(canonical(json, "/zz", "/a/5", "/a/-", "/a/01", "/s/0", "/a/1/c/d"))
        .isEqualTo("{\"a\":[1,{\"b\":2}],\"s\":\"x\"}");
  }

  @Test
  void theEmptyPointerExcludesTheWholeDocumentButStillValidatesIt() {
    assertThat(canonical("{\"a\":1}", "")).isEmpty();
    assertThatThrownBy(() -> canonical("{\"a\":1,}", "")).isInstanceOf(InvalidJsonException.class);
  }

  @Test
  void excludedValuesMustStillBeValid() {
    assertThatThrownBy(() -> canonical("{\"ts\":01,\"a\":1}", "/ts"))
        .isInstanceOf(InvalidJsonException.class);
    assertThatThrownBy(() -> canonical("{\"ts\":1,\"ts\":2}", "/ts"))
        .isInstanceOf(InvalidJsonException.class)
        .hasMessageContaining("duplicate");
  }

  @Test
  void excludingTheFirstMemberLeavesNoStrayComma() {
    assertThat(canonical("{\"a\":1,\"b\":2,\"c\":3}", "/a")).isEqualTo("{\"b\":2,\"c\":3}");
    assertThat(canonical("{\"c\":1,\"b\":2,\"a\":3}", "/c", "/a")).isEqualTo("{\"b\":2}");
    assertThat(canonical("{\"c\":{\"y\":1,\"x\":2},\"b\":2}", "/b"))
        .isEqualTo("{\"c\":{\"x\":2,\"y\":1}}");
  }

  @Test
  void excludingAValueThatHoldsUnsortedObjectsLeavesTheRestSorted() {
    String json =
        "{\"z\":{\"b\":1,\"a\":[{\"d\":1,\"c\":2}]},\"y\":[{\"f\":1,\"e\":2}],\"x\":{\"h\":1,\"g\":2}}";
    assertThat(canonical(json, "/z"))
        .isEqualTo("{\"x\":{\"g\":2,\"h\":1},\"y\":[{\"e\":2,\"f\":1}]}");
    assertThat(canonical(json, "/z/a/0", "/x/h"))
        .isEqualTo("{\"x\":{\"g\":2},\"y\":[{\"e\":2,\"f\":1}],\"z\":{\"a\":[],\"b\":1}}");
  }

  @Test
  void deeplyNestedUnsortedObjectsAreAllSorted() {
    int n = JsonCanonicalizer.MAX_DEPTH - 1;
    String json = "{\"b\":1,\"a\":".repeat(n) + "{}" + "}".repeat(n);
    String expected = "{\"a\":".repeat(n) + "{}" + ",\"b\":1}".repeat(n);
    assertThat(canonical(json)).isEqualTo(expected);
  }

  @Test
  void malformedPointersAreRejectedByName() {
    for (String bad : List.of("a", "/~2", "/a~", "/\uD800")) {
      assertThatThrownBy(() -> JsonCanonicalizer.canonicalize(new byte[] {'1'}, Set.of(bad)))
          .isInstanceOf(IllegalArgumentException.class)
          .isNotInstanceOf(InvalidJsonException.class)
          .hasMessageContaining("'" + bad + "'");
    }
  }

  @Test
  void canonicalisingFromManyThreadsAtOnceGivesTheSameBytes() {
    String json = "{\"z\":[1.50,2e3,{\"b\":\"\\u00e9\",\"a\":null}],\"a\":true}";
    String expected = canonical(json);
    List<String> results =
        IntStream.range(0, 2_000).parallel().mapToObj(i -> canonical(json)).toList();
    assertThat(results).containsOnly(expected);
  }

  @Test
  void bodiesLargerThanTheRetainedBufferWork() {
    String big = "[" + "\"" + "x".repeat(3 << 20) + "\"" + ",1e20".repeat(1000) + "]";
    String result = canonical(big);
    assertThat(result.length()).isEqualTo(big.length() + 17 * 1000);
    assertThat(result.endsWith(",100000000000000000000]")).isTrue();
    assertThat(canonical("[1]")).isEqualTo("[1]");
  }

  static String canonical(String json, String... excluded) {
    return new String(
        JsonCanonicalizer.canonicalize(json.getBytes(UTF_8), Set.of(excluded)), UTF_8);
  }
}
