package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code Forwarded} and {@code X-Forwarded-*} under one rule (issue 30, item 10): believed only
 * from a proxy named in {@code trusted-proxies}; from anyone else the gateway says what it saw.
 */
@Timeout(60)
class ForwardingTest {

  private static final String[] CLAIMS = {
    "Forwarded", "for=203.0.113.9;proto=https",
    "X-Forwarded-For", "203.0.113.9",
    "X-Forwarded-Proto", "https",
    "X-Forwarded-Host", "shop.example"
  };

  @Test
  void aClientsForwardingFieldsAreReplacedByWhatTheGatewaySaw() throws Exception {
    try (RawUpstream upstream = new RawUpstream("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      gw.client.postJson("/payments/claims", null, "{}", CLAIMS);

      String head = upstream.heads().get(0);
      assertThat(lines(head, "forwarded:")).isEmpty();
      assertThat(lines(head, "x-forwarded-for:")).containsExactly("X-Forwarded-For: 127.0.0.1");
      assertThat(lines(head, "x-forwarded-proto:")).containsExactly("X-Forwarded-Proto: http");
      assertThat(lines(head, "x-forwarded-host:")).doesNotContain("X-Forwarded-Host: shop.example");
    }
  }

  @Test
  void aTrustedProxysForwardingFieldsPassAndItsAddressIsAppended() throws Exception {
    try (RawUpstream upstream = new RawUpstream("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        TestGateway gw =
            TestGateway.start("--upstream", upstream.url(), "--trusted-proxies", "127.0.0.1,::1")) {
      gw.client.postJson("/payments/claims", null, "{}", CLAIMS);

      String head = upstream.heads().get(0);
      assertThat(lines(head, "forwarded:"))
          .containsExactly("Forwarded: for=203.0.113.9;proto=https");
      assertThat(lines(head, "x-forwarded-for:"))
          .containsExactly("X-Forwarded-For: 203.0.113.9, 127.0.0.1");
      assertThat(lines(head, "x-forwarded-proto:")).containsExactly("X-Forwarded-Proto: https");
      assertThat(lines(head, "x-forwarded-host:"))
          .containsExactly("X-Forwarded-Host: shop.example");
    }
  }

  @Test
  void trustedProxiesAreAddressesNeverNamesToResolve() {
    for (String notAnAddress : List.of("lb.internal", "10.0.0.256", "10.0.0.5,lb.internal")) {
      assertThatThrownBy(() -> GatewayConfig.builder().trustedProxies(notAnAddress))
          .as(notAnAddress)
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("trusted-proxies");
    }
  }

  private static List<String> lines(String head, String prefix) {
    return head.lines()
        .filter(l -> l.toLowerCase(java.util.Locale.ROOT).startsWith(prefix))
        .toList();
  }
}
