package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.InFlightPolicy;
import dev.once.http.RoutePolicy;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.util.unit.DataSize;

/**
 * The defaults an IDE shows for {@code once.defaults.*} are written down in the additional metadata,
 * while the values in force are the core's: this keeps the two from drifting apart.
 */
class PropertiesMetadataTest {

  private static Map<String, JsonNode> defaults() throws Exception {
    try (InputStream in = PropertiesMetadataTest.class.getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      Map<String, JsonNode> byName = new HashMap<>();
      for (JsonNode p : new ObjectMapper().readTree(in).get("properties")) {
        if (p.has("defaultValue")) {
          byName.put(p.get("name").asText(), p.get("defaultValue"));
        }
      }
      return byName;
    }
  }

  @Test
  void theDocumentedDefaultsAreTheCoresDefaults() throws Exception {
    Map<String, JsonNode> d = defaults();
    ExecutionPolicy execution = ExecutionPolicy.DEFAULTS;
    RoutePolicy route = RoutePolicy.DEFAULTS;

    assertThat(List.of(d.get("once.defaults.methods").get(0).asText(), d.get("once.defaults.methods").get(1).asText()))
        .containsExactlyInAnyOrderElementsOf(route.methods());
    assertThat(d.get("once.defaults.key-required").asBoolean()).isEqualTo(route.keyRequired());
    assertThat(DurationStyle.detectAndParse(d.get("once.defaults.lease").asText())).isEqualTo(execution.lease());
    assertThat(DurationStyle.detectAndParse(d.get("once.defaults.ttl").asText())).isEqualTo(execution.ttl());
    assertThat(execution.inFlight()).isEqualTo(InFlightPolicy.reject());
    assertThat(d.get("once.defaults.in-flight").asText()).isEqualTo("reject");
    assertThat(DurationStyle.detectAndParse(d.get("once.defaults.max-wait").asText())).isEqualTo(PolicyMapper.DEFAULT_MAX_WAIT);
    assertThat(execution.failureMode()).isEqualTo(FailureMode.FAIL_CLOSED);
    assertThat(d.get("once.defaults.failure-mode").asText()).isEqualTo("fail-closed");
    assertThat(DataSize.parse(d.get("once.defaults.max-request-bytes").asText()).toBytes()).isEqualTo(route.maxRequestBytes());
    assertThat(DataSize.parse(d.get("once.defaults.max-response-bytes").asText()).toBytes()).isEqualTo(execution.maxResultBytes());
    assertThat(d.get("once.defaults.max-waiters-per-key").asInt()).isEqualTo(route.maxWaitersPerKey());
    assertThat(DurationStyle.detectAndParse(d.get("once.defaults.store-retry-after").asText())).isEqualTo(execution.storeRetryAfter());
  }
}
