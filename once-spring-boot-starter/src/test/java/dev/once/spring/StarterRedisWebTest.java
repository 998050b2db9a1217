package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.spring.shop.FakeShopApplication;
import dev.once.store.redis.RedisStore;
import dev.once.tck.RequiredServices;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * Every scenario of {@link StarterWebTest} again, on the Redis store that the starter chose from
 * the application's {@code spring.data.redis.*} connection factory (the machine's Redis).
 */
@SpringBootTest(
    classes = FakeShopApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "spring.data.redis.host=127.0.0.1",
      "spring.data.redis.port=6379",
      "once.store.redis.key-prefix=once-starter-test:",
      "once.routes[0].pattern=/api/strict-notes",
      "once.routes[0].key-required=true",
      "management.endpoints.web.exposure.include=health,metrics",
      "management.endpoint.health.show-details=always"
    })
class StarterRedisWebTest extends StarterWebTest {

  @BeforeAll
  static void redisIsUp() {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
  }

  @Test
  void theStoreIsRedis() {
    assertThat(storeBean).isInstanceOf(RedisStore.class);
  }
}
