package dev.once.outbox;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.URI;
import java.time.Duration;

/**
 * A relay in a child JVM, for the crash test: {@code <jdbcUrl> <table> <outboxName> <downstream>
 * <leaseSeconds>}. It prints {@code relay started} and relays until it is killed.
 */
public final class RelayMain {

  private RelayMain() {}

  public static void main(String[] args) throws Exception {
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(args[0]);
    config.setUsername("postgres");
    config.setPassword("");
    config.setMaximumPoolSize(2);
    HikariDataSource pool = new HikariDataSource(config);
    Outbox outbox = Outbox.postgres(pool).tableName(args[1]).name(args[2]).build();
    int lease = Integer.parseInt(args[4]);
    HttpDelivery http =
        HttpDelivery.builder()
            .baseUri(URI.create(args[3]))
            .requestTimeout(Duration.ofSeconds(lease - 2))
            .threads(2)
            .build();
    OutboxRelay relay =
        outbox
            .relay(http)
            .batchSize(50)
            .lease(Duration.ofSeconds(lease))
            .deliveryTimeout(Duration.ofSeconds(lease - 1))
            .pollInterval(Duration.ofMillis(20))
            .build();
    relay.start();
    System.out.println("relay started");
    Thread.sleep(Duration.ofMinutes(5).toMillis());
  }
}
