package dev.once.kafka;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import kafka.testkit.KafkaClusterTestKit;
import kafka.testkit.TestKitNodes;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewTopic;

/**
 * One real Kafka broker in this JVM, in KRaft mode (one combined broker and controller node), from
 * the broker's own test kit; on loopback only. A test class starts one and closes it when done.
 * Public for once-bench's harnesses (once-kafka's test-jar).
 */
public final class KafkaBroker implements AutoCloseable {

  private final KafkaClusterTestKit cluster;

  private KafkaBroker(KafkaClusterTestKit cluster) {
    this.cluster = cluster;
  }

  public static KafkaBroker start() throws Exception {
    KafkaClusterTestKit cluster =
        new KafkaClusterTestKit.Builder(
                new TestKitNodes.Builder()
                    .setCombined(true)
                    .setNumBrokerNodes(1)
                    .setNumControllerNodes(1)
                    .build())
            .setConfigProp("offsets.topic.replication.factor", "1")
            .setConfigProp("offsets.topic.num.partitions", "4")
            .setConfigProp("transaction.state.log.replication.factor", "1")
            .setConfigProp("transaction.state.log.min.isr", "1")
            .setConfigProp("group.initial.rebalance.delay.ms", "0")
            .setConfigProp("auto.create.topics.enable", "false")
            .setConfigProp("log.flush.interval.messages", "1000000")
            .build();
    try {
      cluster.format();
      cluster.startup();
      cluster.waitForReadyBrokers();
    } catch (Exception e) {
      cluster.close();
      throw e;
    }
    return new KafkaBroker(cluster);
  }

  public String bootstrapServers() {
    return cluster.bootstrapServers();
  }

  /** Creates {@code name} with {@code partitions} partitions and waits until it exists. */
  public void createTopic(String name, int partitions) throws Exception {
    try (Admin admin =
        Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers()))) {
      admin
          .createTopics(List.of(new NewTopic(name, partitions, (short) 1)))
          .all()
          .get(60, TimeUnit.SECONDS);
    }
  }

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
