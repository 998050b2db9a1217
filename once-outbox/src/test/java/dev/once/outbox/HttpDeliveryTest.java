package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class HttpDeliveryTest {

  @ParameterizedTest
  @ValueSource(ints = {200, 201, 202, 204, 299})
  void aSuccessIsDelivered(int status) {
    assertThat(HttpDelivery.classify(status, Optional.empty()))
        .isEqualTo(DeliveryOutcome.DELIVERED);
  }

  @ParameterizedTest
  @ValueSource(ints = {408, 409, 425, 429, 500, 502, 503, 504})
  void transientAnswersAreRetried(int status) {
    assertThat(HttpDelivery.classify(status, Optional.empty()))
        .isInstanceOf(DeliveryOutcome.Retry.class);
  }

  @ParameterizedTest
  @ValueSource(ints = {100, 301, 304, 400, 401, 403, 404, 410, 413, 422})
  void otherAnswersAreDead(int status) {
    assertThat(HttpDelivery.classify(status, Optional.empty()))
        .isInstanceOf(DeliveryOutcome.Dead.class);
  }

  @Test
  void retryAfterInSecondsIsTheLeastWaitAndAnythingElseIsIgnored() {
    assertThat(HttpDelivery.classify(503, Optional.of(" 7 ")))
        .isEqualTo(new DeliveryOutcome.Retry("HTTP 503", Duration.ofSeconds(7)));
    assertThat(HttpDelivery.classify(429, Optional.of("Wed, 21 Oct 2015 07:28:00 GMT")))
        .isEqualTo(new DeliveryOutcome.Retry("HTTP 429", Duration.ZERO));
    assertThat(HttpDelivery.classify(429, Optional.of("-5")))
        .isEqualTo(new DeliveryOutcome.Retry("HTTP 429", Duration.ZERO));
  }

  @Test
  void aDestinationThatIsNoHttpUriIsDeadWithoutASend() throws Exception {
    try (HttpDelivery http = HttpDelivery.create()) {
      for (String destination : new String[] {"relative/path", "ftp://host/x", "kafka-topic"}) {
        PendingMessage m =
            new PendingMessage(OutboxMessage.of("a", destination, new byte[0]), "k", 1);
        assertThat(http.deliver(m).get()).as(destination).isInstanceOf(DeliveryOutcome.Dead.class);
      }
      PendingMessage host =
          new PendingMessage(
              new OutboxMessage(
                  "a", "http://127.0.0.1:9/x", null, Map.of("Host", "evil"), new byte[0]),
              "k",
              1);
      assertThat(http.deliver(host).get()).isInstanceOf(DeliveryOutcome.Dead.class);
    }
  }

  @Test
  void anUnreachableDestinationIsRetried() throws Exception {
    try (HttpDelivery http = HttpDelivery.builder().connectTimeout(Duration.ofSeconds(2)).build()) {
      // Port 9 (discard) on loopback: nothing listens, the connection is refused at once.
      PendingMessage m =
          new PendingMessage(OutboxMessage.of("a", "http://127.0.0.1:9/x", new byte[0]), "k", 1);
      assertThat(http.deliver(m).get()).isInstanceOf(DeliveryOutcome.Retry.class);
    }
  }

  @Test
  void badOptionsAreRejectedByName() {
    assertThatThrownBy(() -> HttpDelivery.builder().baseUri(URI.create("/relative")))
        .hasMessageContaining("baseUri");
    assertThatThrownBy(() -> HttpDelivery.builder().requestTimeout(Duration.ZERO))
        .hasMessageContaining("requestTimeout");
    assertThatThrownBy(() -> HttpDelivery.builder().threads(0)).hasMessageContaining("threads");
  }
}
