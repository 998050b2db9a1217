package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HeadersTest {

  private static final Headers OUTER = Headers.of("X-Request-Id", "r1", "Vary", "Origin");

  @Test
  void sinceLeavesOutFieldsThatAreAsTheyWere() {
    Headers now = OUTER.with("Content-Type", "text/plain");

    assertThat(now.since(OUTER)).isEqualTo(Headers.of("Content-Type", "text/plain"));
  }

  @Test
  void sinceKeepsOnlyTheValuesAppendedAfterTheOuterOnes() {
    Headers now = OUTER.with("Vary", "Accept");

    assertThat(now.since(OUTER)).isEqualTo(Headers.of("Vary", "Accept"));
  }

  @Test
  void sinceKeepsEveryValueOfAReplacedField() {
    Headers now = Headers.of("X-Request-Id", "r2", "Vary", "Origin");

    assertThat(now.since(OUTER)).isEqualTo(Headers.of("X-Request-Id", "r2"));
  }

  @Test
  void sinceMatchesNamesWhateverTheirCase() {
    Headers now = Headers.of("x-request-id", "r1", "VARY", "Origin", "vary", "Accept");

    assertThat(now.since(OUTER)).isEqualTo(Headers.of("VARY", "Accept"));
  }

  @Test
  void endToEndDropsTheFixedHopByHopFieldsWhateverTheirCase() {
    Headers in =
        Headers.of(
            "Content-Type", "text/plain",
            "TRANSFER-ENCODING", "chunked",
            "keep-Alive", "timeout=5",
            "Te", "trailers",
            "X-Id", "1",
            "Proxy-Connection", "keep-alive",
            "UPGRADE", "websocket");

    assertThat(in.endToEnd()).isEqualTo(Headers.of("Content-Type", "text/plain", "X-Id", "1"));
  }

  @Test
  void endToEndDropsEachOfTheTenFixedHopByHopFieldsAndKeepsNamesOfTheSameLengths() {
    Headers in =
        Headers.of(
            "CONNECTION", "close",
            "User-Agent", "same length as connection",
            "Keep-Alive", "timeout=5",
            "Proxy-Authenticate", "Basic",
            "proxy-AUTHORIZATION", "Basic x",
            "Proxy-Connection", "close",
            "TE", "trailers",
            "Trailer", "X-Sum",
            "Accept", "same length as trailer",
            "TRAILERS", "x",
            "Location", "same length as trailers",
            "Transfer-Encoding", "chunked",
            "Upgrade", "h2c");

    assertThat(in.endToEnd())
        .isEqualTo(
            Headers.of(
                "User-Agent", "same length as connection",
                "Accept", "same length as trailer",
                "Location", "same length as trailers"));
  }

  @Test
  void endToEndDropsEveryFieldNamedInConnectionWhateverTheirCase() {
    Headers in =
        Headers.of(
            "X-Secret", "s",
            "Connection", "x-secret , X-OTHER",
            "x-other", "o",
            "connection", "close",
            "X-Kept", "k");

    assertThat(in.endToEnd()).isEqualTo(Headers.of("X-Kept", "k"));
  }

  @Test
  void endToEndWithAConnectionFieldNamingOnlyHopByHopFieldsKeepsTheRest() {
    Headers in = Headers.of("Connection", "Keep-Alive", "keep-alive", "timeout=5", "X-Kept", "k");

    assertThat(in.endToEnd()).isEqualTo(Headers.of("X-Kept", "k"));
  }

  @Test
  void endToEndReturnsHeadersWithoutHopByHopFieldsAsTheyAre() {
    Headers in = Headers.of("Content-Type", "text/plain", "Connections", "not one", "TEE", "x");

    assertThat(in.endToEnd()).isSameAs(in);
  }
}
