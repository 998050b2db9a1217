package dev.once.fingerprint;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class FingerprinterTest {

  private static final Fingerprinter DEFAULTS = Fingerprinter.defaults();

  @Test
  void memberOrderDoesNotChangeTheFingerprint() {
    assertSameJson(
        "{\"amount\":100,\"currency\":\"EUR\"}", "{\"currency\":\"EUR\",\"amount\":100}");
  }

  @Test
  void whitespaceDoesNotChangeTheFingerprint() {
    assertSameJson("{\"a\":[1,2]}", " {\n  \"a\" : [ 1 ,\t2 ]\r\n}\n");
  }

  @Test
  void numberSpellingDoesNotChangeTheFingerprint() {
    assertSameJson("{\"n\":1}", "{\"n\":1.0}");
    assertSameJson("{\"n\":1}", "{\"n\":1e0}");
    assertSameJson("{\"n\":1}", "{\"n\":10E-1}");
    assertSameJson("{\"n\":0}", "{\"n\":-0.0}");
  }

  @Test
  void escapeSpellingDoesNotChangeTheFingerprint() {
    assertSameJson("{\"name\":\"Aé/\"}", "{\"n\\u0061me\":\"\\u0041\\u00E9\\/\"}");
  }

  @Test
  void differentDataChangesTheFingerprint() {
    assertThat(json(DEFAULTS, "{\"amount\":100}")).isNotEqualTo(json(DEFAULTS, "{\"amount\":101}"));
    assertThat(json(DEFAULTS, "[1,2]")).isNotEqualTo(json(DEFAULTS, "[2,1]"));
    assertThat(json(DEFAULTS, "{\"a\":\"1\"}")).isNotEqualTo(json(DEFAULTS, "{\"a\":1}"));
  }

  @Test
  void excludedPointerValuesDoNotChangeTheFingerprint() {
    Fingerprinter fingerprinter =
        Fingerprinter.builder().exclude("/meta/timestamp").exclude("/items/0/ts").build();
    Fingerprint first =
        json(
            fingerprinter,
            "{\"meta\":{\"timestamp\":\"2024-05-01T10:00:00Z\"},\"items\":[{\"ts\":1,\"sku\":\"x\"}]}");
    Fingerprint retry =
        json(
            fingerprinter,
            "{\"items\":[{\"sku\":\"x\",\"ts\":2}],\"meta\":{\"timestamp\":\"2024-05-01T10:00:07Z\"}}");
    Fingerprint without = json(fingerprinter, "{\"items\":[{\"sku\":\"x\"}],\"meta\":{}}");
    assertThat(retry).isEqualTo(first);
    assertThat(without).isEqualTo(first);
  }

  @Test
  void valuesOutsideTheExcludedPointersStillCount() {
    Fingerprinter fingerprinter = Fingerprinter.builder().exclude("/items/0/ts").build();
    assertThat(json(fingerprinter, "{\"items\":[{\"ts\":1},{\"ts\":1}]}"))
        .isNotEqualTo(json(fingerprinter, "{\"items\":[{\"ts\":1},{\"ts\":2}]}"));
  }

  @Test
  void exclusionsArePartOfTheFingerprintsMeaning() {
    Fingerprinter excluding = Fingerprinter.builder().exclude("/ts").build();
    assertThat(json(excluding, "{\"a\":1}")).isNotEqualTo(json(DEFAULTS, "{\"a\":1}"));
  }

  @Test
  void exclusionOrderAndRepeatsDoNotMatter() {
    Fingerprinter one = Fingerprinter.builder().exclude("/a").exclude("/b").build();
    Fingerprinter other = Fingerprinter.builder().exclude("/b").exclude("/a").exclude("/b").build();
    assertThat(other.exclusions()).containsExactly("/a", "/b");
    assertThat(json(other, "{\"a\":1,\"c\":2}")).isEqualTo(json(one, "{\"c\":2}"));
  }

  @Test
  void contextPartsChangeTheFingerprint() {
    byte[] body = "{}".getBytes(UTF_8);
    assertThat(DEFAULTS.json(body, "POST", "/payments"))
        .isNotEqualTo(DEFAULTS.json(body, "PUT", "/payments"));
    assertThat(DEFAULTS.json(body, "POST", "/payments"))
        .isNotEqualTo(DEFAULTS.json(body, "/payments", "POST"));
  }

  @Test
  void contextPartsAreUnambiguous() {
    byte[] body = "{}".getBytes(UTF_8);
    assertThat(DEFAULTS.json(body, "ab", "c")).isNotEqualTo(DEFAULTS.json(body, "a", "bc"));
    assertThat(DEFAULTS.json(body, "a")).isNotEqualTo(DEFAULTS.json(body, "a", ""));
    assertThat(DEFAULTS.json(body)).isNotEqualTo(DEFAULTS.json(body, ""));
    assertThat(DEFAULTS.raw(body, "a")).isNotEqualTo(DEFAULTS.raw("a{}".getBytes(UTF_8)));
  }

  @Test
  void loneSurrogatesInContextPartsDoNotCollideWithOtherStrings() {
    byte[] body = "{}".getBytes(UTF_8);
    assertThat(DEFAULTS.json(body, "\uD800")).isNotEqualTo(DEFAULTS.json(body, "?"));
    assertThat(DEFAULTS.json(body, "\uD800")).isNotEqualTo(DEFAULTS.json(body, "\uDC00"));
  }

  @Test
  void rawAndJsonFingerprintsOfTheSameBytesDiffer() {
    byte[] canonical = "{\"a\":1}".getBytes(UTF_8);
    assertThat(DEFAULTS.json(canonical, "POST")).isNotEqualTo(DEFAULTS.raw(canonical, "POST"));
  }

  @Test
  void aNullBodyCountsAsEmpty() {
    assertThat(DEFAULTS.json(null, "POST")).isEqualTo(DEFAULTS.raw(new byte[0], "POST"));
    assertThat(DEFAULTS.raw(null, "POST")).isEqualTo(DEFAULTS.raw(new byte[0], "POST"));
  }

  @Test
  void aNullContextPartIsRejected() {
    assertThatThrownBy(() -> DEFAULTS.json(new byte[0], "POST", null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("context part 1 is null");
  }

  @Test
  void fingerprintsCarryTheVersionAndTheirVersion1Fingerprint() {
    Fingerprint fingerprint = DEFAULTS.raw(new byte[0]);
    assertThat(fingerprint.version()).isEqualTo(Fingerprinter.VERSION).isEqualTo(2);
    assertThat(fingerprint.hex()).hasSize(64);
    assertThat(fingerprint.previous().version()).isEqualTo(1);
    assertThat(fingerprint.previous().previous()).isNull();
  }

  @Test
  void theDigestInputIsExactlyTheDocumentedLayout() throws Exception {
    byte[] body = "{ \"b\": 2.50, \"a\": [1e2] }".getBytes(UTF_8);
    byte[] canonical = "{\"a\":[100],\"b\":2.5}".getBytes(UTF_8);
    byte[] context = parts("POST", "/pay");
    byte[] noMediaType = {-1, -1, -1, -1};
    byte[] json = utf8Part("application/json");
    byte[] noExclusions = sha256(parts());
    byte[] oneExclusion = sha256(parts("/ts"));
    Fingerprinter excluding = Fingerprinter.builder().exclude("/ts").build();

    assertThat(DEFAULTS.json(body, "POST", "/pay").hex())
        .isEqualTo(hex(sha256(V2, context, noMediaType, J, noExclusions, canonical)));
    assertThat(excluding.json(body, "POST", "/pay").hex())
        .isEqualTo(hex(sha256(V2, context, noMediaType, J, oneExclusion, canonical)));
    assertThat(DEFAULTS.raw(body, "POST", "/pay").hex())
        .isEqualTo(hex(sha256(V2, context, noMediaType, R, body)));
    assertThat(DEFAULTS.content("Application/JSON; charset=utf-8", body, "POST", "/pay").hex())
        .isEqualTo(hex(sha256(V2, context, json, J, noExclusions, canonical)));
    assertThat(DEFAULTS.content("text/plain;format=flowed", body, "POST", "/pay").hex())
        .isEqualTo(hex(sha256(V2, context, utf8Part("text/plain"), R, body)));
  }

  @Test
  void theVersion1DigestInputIsTheLayoutVersion1Documented() throws Exception {
    byte[] body = "{ \"b\": 2.50, \"a\": [1e2] }".getBytes(UTF_8);
    byte[] canonical = "{\"a\":[100],\"b\":2.5}".getBytes(UTF_8);
    byte[] context = parts("POST", "/pay");
    byte[] noExclusions = sha256(parts());

    assertThat(DEFAULTS.json(body, "POST", "/pay").previous().hex())
        .isEqualTo(hex(sha256(V1, context, J, noExclusions, canonical)));
    assertThat(
            Fingerprinter.builder()
                .exclude("/ts")
                .build()
                .json(body, "POST", "/pay")
                .previous()
                .hex())
        .isEqualTo(hex(sha256(V1, context, J, sha256(parts("/ts")), canonical)));
    assertThat(DEFAULTS.raw(body, "POST", "/pay").previous().hex())
        .isEqualTo(hex(sha256(V1, context, R, body)));
    // What once-http hashed before version 2: JSON types without the type, others with the header.
    assertThat(
            DEFAULTS
                .content("application/json; charset=utf-8", body, "POST", "/pay")
                .previous()
                .hex())
        .isEqualTo(hex(sha256(V1, context, J, noExclusions, canonical)));
    assertThat(DEFAULTS.content("text/plain; charset=utf-8", body, "POST", "/pay").previous().hex())
        .isEqualTo(hex(sha256(V1, parts("POST", "/pay", "text/plain; charset=utf-8"), R, body)));
    assertThat(DEFAULTS.content(null, body, "POST", "/pay").previous().hex())
        .isEqualTo(hex(sha256(V1, parts("POST", "/pay", ""), R, body)));
  }

  @Test
  void fingerprintsOfEachVersionNeverChange() {
    // Golden values, computed independently (Python hashlib) from the documented layouts. If one
    // changes, stored fingerprints stop matching retries: bump VERSION instead.
    byte[] body = "{\"b\":2,\"a\":1}".getBytes(UTF_8);
    Fingerprint json = DEFAULTS.json(body, "POST", "/payments");
    assertThat(json.encoded())
        .isEqualTo("2:8cc8efc7166d0bc63580704e3fab007d4753ac0708baa7471e502c35bfd05539");
    assertThat(json.previous().encoded())
        .isEqualTo("1:4c262c824756e7b3fd89df8c9498e828d93ff7ba7509d0e53a367fa9b7aa370d");
    assertThat(DEFAULTS.content("application/json", body, "POST", "/payments").encoded())
        .isEqualTo("2:c38a39b7550c44af73d518bac03850510f918ac482911e430ce15fa517b7393e");
  }

  @Test
  void theMediaTypeEssenceIsPartOfTheFingerprint() {
    byte[] patch = "[{\"op\":\"remove\",\"path\":\"/a\"}]".getBytes(UTF_8);
    assertThat(DEFAULTS.content("application/json-patch+json", patch, "PATCH", "/a"))
        .isNotEqualTo(DEFAULTS.content("application/merge-patch+json", patch, "PATCH", "/a"));
    assertThat(DEFAULTS.content("text/plain", patch, "PATCH", "/a"))
        .isNotEqualTo(DEFAULTS.content("text/csv", patch, "PATCH", "/a"));
  }

  @Test
  void mediaTypeParametersCaseAndSpacesDoNotChangeTheFingerprint() {
    byte[] text = "hello".getBytes(UTF_8);
    Fingerprint plain = DEFAULTS.content("text/plain", text, "POST", "/notes");
    assertThat(DEFAULTS.content("text/plain; charset=utf-8", text, "POST", "/notes"))
        .isEqualTo(plain);
    assertThat(DEFAULTS.content(" Text/Plain ;charset=UTF-8", text, "POST", "/notes"))
        .isEqualTo(plain);
    assertThat(
            DEFAULTS.content(
                "application/json; charset=utf-8", "{\"a\":1.0}".getBytes(UTF_8), "POST", "/a"))
        .isEqualTo(
            DEFAULTS.content("application/json", "{ \"a\": 1 }".getBytes(UTF_8), "POST", "/a"));
  }

  @Test
  void anAbsentMediaTypeIsAValueOfItsOwn() {
    byte[] body = "{}".getBytes(UTF_8);
    Fingerprint absent = DEFAULTS.content(null, body, "POST", "/a");
    assertThat(absent)
        .isNotEqualTo(DEFAULTS.content("", body, "POST", "/a"))
        .isNotEqualTo(DEFAULTS.content("application/octet-stream", body, "POST", "/a"))
        .isEqualTo(DEFAULTS.raw(body, "POST", "/a"));
    assertThat(DEFAULTS.content("application/json", body, "POST", "/a"))
        .isNotEqualTo(DEFAULTS.json(body, "POST", "/a"));
  }

  @Test
  void jsonMediaTypesAreCanonicalisedAndOthersAreNot() {
    byte[] one = "{\"a\":1,\"b\":2}".getBytes(UTF_8);
    byte[] other = "{ \"b\": 2, \"a\": 1.0 }".getBytes(UTF_8);
    for (String json :
        List.of("application/json", "application/problem+json", "APPLICATION/VND.API+JSON; v=2")) {
      assertThat(DEFAULTS.content(json, other, "POST", "/a"))
          .as(json)
          .isEqualTo(DEFAULTS.content(json, one, "POST", "/a"));
    }
    for (String raw : List.of("text/plain", "application/jsonx", "application/json-seq")) {
      assertThat(DEFAULTS.content(raw, other, "POST", "/a"))
          .as(raw)
          .isNotEqualTo(DEFAULTS.content(raw, one, "POST", "/a"));
    }
  }

  @Test
  void aRecordOfVersion1MatchesARetryOfTheRequestThatWroteIt() {
    byte[] body = "{\"amount\":100,\"currency\":\"EUR\"}".getBytes(UTF_8);
    // As a store reads back what version 1 wrote: a value with no previous version.
    Fingerprint recorded =
        Fingerprint.parse(DEFAULTS.json(body, "POST", "/payments").previous().encoded());
    Fingerprint retry =
        DEFAULTS.json(
            "{\"currency\":\"EUR\",\"amount\":100.0}".getBytes(UTF_8), "POST", "/payments");
    Fingerprint other =
        DEFAULTS.json("{\"amount\":101,\"currency\":\"EUR\"}".getBytes(UTF_8), "POST", "/payments");

    assertThat(recorded.version()).isEqualTo(1);
    assertThat(retry.matches(recorded)).isTrue();
    assertThat(other.matches(recorded)).isFalse();
  }

  @Test
  void aRecordOfVersion1WrittenThroughHttpMatchesARetryWhateverItsBody() throws Exception {
    // Exactly what once-http stored before version 2, from the documented layout.
    byte[] text = "hello".getBytes(UTF_8);
    Fingerprint rawRecord =
        new Fingerprint(
            1, hex(sha256(V1, parts("PUT", "/f", "", "text/plain;charset=utf-8"), R, text)));
    Fingerprint jsonRecord =
        new Fingerprint(
            1,
            hex(
                sha256(
                    V1, parts("POST", "/p", ""), J, sha256(parts()), "{\"a\":1}".getBytes(UTF_8))));

    assertThat(
            DEFAULTS.content("text/plain;charset=utf-8", text, "PUT", "/f", "").matches(rawRecord))
        .isTrue();
    assertThat(
            DEFAULTS
                .content("text/plain;charset=utf-8", "hello!".getBytes(UTF_8), "PUT", "/f", "")
                .matches(rawRecord))
        .isFalse();
    assertThat(
            DEFAULTS
                .content("application/json", "{\"a\":1.0}".getBytes(UTF_8), "POST", "/p", "")
                .matches(jsonRecord))
        .isTrue();
    assertThat(
            DEFAULTS
                .content("application/json", "{\"a\":2}".getBytes(UTF_8), "POST", "/p", "")
                .matches(jsonRecord))
        .isFalse();
  }

  @Test
  void aRecordOfVersion1ComparesNumbersAsVersion1Did() {
    // Version 1 could not tell these apart, so neither can its records; version 2 records can.
    Fingerprint recorded =
        Fingerprint.parse(json(DEFAULTS, "{\"id\":12345678901234567891}").previous().encoded());
    Fingerprint same = json(DEFAULTS, "{\"id\":12345678901234567891}");
    Fingerprint neighbour = json(DEFAULTS, "{\"id\":12345678901234567892}");

    assertThat(same.matches(recorded)).isTrue();
    assertThat(neighbour.matches(recorded)).isTrue();
    assertThat(neighbour.matches(same)).isFalse();
    assertThat(json(DEFAULTS, "{\"id\":12345678901234599999}").matches(recorded)).isFalse();
  }

  @Test
  void aBodyOnlyVersion2RejectsStillGetsItsVersion1Fingerprint() {
    // Version 1 read 1e-1000000000 as 0; version 2 will not write an exponent of ten digits and
    // hashes raw.
    byte[] body = "[1e-1000000000]".getBytes(UTF_8);
    Fingerprint fingerprint = DEFAULTS.json(body, "POST");
    assertThat(fingerprint).isEqualTo(DEFAULTS.raw(body, "POST"));
    assertThat(fingerprint.previous())
        .isEqualTo(DEFAULTS.json("[0]".getBytes(UTF_8), "POST").previous());
  }

  @Test
  void malformedPointersAreRejectedUpFrontByName() {
    for (String bad : List.of("ts", "/a~", "/a~2b", "#/a")) {
      assertThatThrownBy(() -> Fingerprinter.builder().exclude(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("'" + bad + "'");
    }
    assertThatThrownBy(() -> Fingerprinter.builder().exclude(null))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void wellFormedPointersAreAccepted() {
    Fingerprinter fingerprinter =
        Fingerprinter.builder()
            .exclude("")
            .exclude("/")
            .exclude("/a~0b~1c")
            .exclude("/items/0/ts")
            .exclude("/-")
            .build();
    assertThat(fingerprinter.exclusions())
        .containsExactly("", "/", "/-", "/a~0b~1c", "/items/0/ts");
  }

  @Test
  void fingerprintingFromManyThreadsAtOnceAgrees() {
    Fingerprinter fingerprinter = Fingerprinter.builder().exclude("/ts").build();
    Fingerprint expected = json(fingerprinter, "{\"b\":[1.0,{\"y\":1,\"x\":2}],\"ts\":3}");
    List<Fingerprint> all =
        IntStream.range(0, 5_000)
            .parallel()
            .mapToObj(
                i ->
                    i % 2 == 0
                        ? json(fingerprinter, "{\"ts\":" + i + ",\"b\":[1,{\"x\":2,\"y\":1}]}")
                        : json(
                            fingerprinter, "{\"b\":[1e0,{\"y\":1,\"x\":2}],\"ts\":\"" + i + "\"}"))
            .toList();
    assertThat(all).containsOnly(expected);
  }

  private static void assertSameJson(String a, String b) {
    assertThat(json(DEFAULTS, b)).isEqualTo(json(DEFAULTS, a));
  }

  private static Fingerprint json(Fingerprinter fingerprinter, String body) {
    return fingerprinter.json(body.getBytes(UTF_8), "POST", "/payments");
  }

  private static final byte[] V1 = {1};
  private static final byte[] V2 = {2};
  private static final byte[] J = {'J'};
  private static final byte[] R = {'R'};

  private static byte[] utf8Part(String part) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    DataOutputStream out = new DataOutputStream(bytes);
    byte[] utf8 = part.getBytes(UTF_8);
    out.writeInt(utf8.length);
    out.write(utf8);
    return bytes.toByteArray();
  }

  private static byte[] parts(String... parts) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    new DataOutputStream(bytes).writeInt(parts.length);
    for (String part : parts) {
      bytes.write(utf8Part(part));
    }
    return bytes.toByteArray();
  }

  private static byte[] sha256(byte[]... chunks) throws Exception {
    MessageDigest digest = MessageDigest.getInstance("SHA-256");
    for (byte[] chunk : chunks) {
      digest.update(chunk);
    }
    return digest.digest();
  }

  private static String hex(byte[] digest) {
    return HexFormat.of().formatHex(digest);
  }
}
