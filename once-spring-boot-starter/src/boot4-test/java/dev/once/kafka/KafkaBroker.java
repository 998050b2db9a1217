package dev.once.kafka;

import org.apache.kafka.common.test.KafkaClusterTestKit;
import org.apache.kafka.common.test.TestKitNodes;

/**
 * once-kafka's test fixture of the same name, for the starter's Kafka test on Boot 4: one real
 * KRaft broker in this JVM, on loopback only. On Boot 3 the starter uses once-kafka's own (Kafka
 * 3.9, like the rest of Once); Boot 4's Spring Kafka needs Kafka 4 clients, which cannot share a
 * JVM with that broker, and Kafka 4 moved the test kit to {@code org.apache.kafka.common.test}.
 * Same configuration as once-kafka's; only what the starter's test calls.
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

  @Override
  public void close() throws Exception {
    cluster.close();
  }
}
