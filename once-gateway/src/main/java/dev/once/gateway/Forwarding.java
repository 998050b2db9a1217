package dev.once.gateway;

import dev.once.http.Headers;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

/**
 * The forwarding fields the upstream gets ({@code Forwarded}, {@code X-Forwarded-For}, {@code
 * -Proto}, {@code -Host}), all four under one rule: what a client says about where a request came
 * from is believed only from a <em>trusted proxy</em> ({@code trusted-proxies}), an address the
 * operator named, such as the TLS-terminating balancer in front of the gateway.
 *
 * <ul>
 *   <li>From any other peer, the client's four fields are dropped and the gateway says what it saw:
 *       {@code X-Forwarded-For} the peer's address, {@code X-Forwarded-Proto} the scheme of the
 *       connection, {@code X-Forwarded-Host} the {@code Host}; no {@code Forwarded}. So a client
 *       cannot make an upstream believe it came over TLS or from another address.
 *   <li>From a trusted proxy, its {@code Forwarded} fields pass as they came, its {@code
 *       X-Forwarded-Proto} and {@code -Host} are kept (set from the connection where it sent none),
 *       and the peer's address is appended to its {@code X-Forwarded-For}, as every proxy in a
 *       chain does.
 * </ul>
 */
record Forwarding(Set<InetAddress> trusted) {

  /** The option's name, as the command line, the YAML file and errors spell it. */
  static final String OPTION = "trusted-proxies";

  /** Nobody is trusted: the default. */
  static final Forwarding NONE = new Forwarding(Set.of());

  /** The names of the fields this class owns; {@link UpstreamFields} copies none of them. */
  static final Set<String> FIELDS =
      Set.of("forwarded", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host");

  /**
   * An IP literal: four decimal groups of 0-255, or hex digits and colons. Only such text reaches
   * {@link InetAddress#getByName}, which parses a literal and would resolve anything else (a group
   * over 255 included) through DNS.
   */
  private static final Pattern LITERAL =
      Pattern.compile(
          "((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
              + "|[0-9A-Fa-f]*:[0-9A-Fa-f:.]*");

  Forwarding {
    trusted = Set.copyOf(trusted);
  }

  /**
   * Parses a comma-separated list of IP addresses ({@code 10.0.0.5,::1}); an empty string trusts
   * nobody. Names are refused, not resolved: trust must not follow DNS.
   */
  static Forwarding parse(String addresses) {
    List<InetAddress> parsed = new ArrayList<>();
    for (String part : addresses.split(",", -1)) {
      String a = part.trim();
      if (addresses.isBlank()) {
        break;
      }
      if (!LITERAL.matcher(a).matches()) {
        throw new IllegalArgumentException(
            OPTION + " must be IP addresses separated by commas, was '" + addresses + "'");
      }
      try {
        parsed.add(InetAddress.getByName(a)); // a literal: no lookup
      } catch (UnknownHostException e) {
        throw new IllegalArgumentException(
            OPTION + " must be IP addresses separated by commas, was '" + addresses + "'", e);
      }
    }
    return new Forwarding(Set.copyOf(parsed));
  }

  /** Whether the peer of this connection is a trusted proxy. */
  boolean trusts(SocketAddress peer) {
    return peer instanceof InetSocketAddress inet
        && inet.getAddress() != null
        && trusted.contains(inet.getAddress());
  }

  /**
   * The client a request is counted for ({@code max-buffered-bytes-per-client}): the peer's
   * address, or, from a trusted proxy, the nearest address in its {@code X-Forwarded-For} that is
   * not itself a trusted proxy (the rightmost one: addresses further left are the client's own
   * word).
   */
  String client(SocketAddress peer, String peerAddress, Headers in) {
    if (!trusts(peer)) {
      return peerAddress;
    }
    List<String> hops = new ArrayList<>();
    for (String field : in.all("X-Forwarded-For")) {
      for (String hop : field.split(",")) {
        if (!hop.isBlank()) {
          hops.add(hop.strip());
        }
      }
    }
    for (int i = hops.size() - 1; i >= 0; i--) {
      if (!trustedLiteral(hops.get(i))) {
        return hops.get(i);
      }
    }
    return peerAddress;
  }

  private boolean trustedLiteral(String address) {
    if (!LITERAL.matcher(address).matches()) {
      return false;
    }
    try {
      return trusted.contains(InetAddress.getByName(address)); // a literal: no lookup
    } catch (UnknownHostException e) {
      return false;
    }
  }

  /**
   * Writes the four fields for a request from {@code peer} over {@code scheme} to {@code out}, each
   * name once (the client's own are never forwarded as they came: {@link #FIELDS}).
   */
  void write(
      Headers in,
      SocketAddress peer,
      String peerAddress,
      String scheme,
      BiConsumer<String, String> out) {
    boolean believed = trusts(peer);
    if (believed) {
      in.all("Forwarded").forEach(v -> out.accept("Forwarded", v));
    }
    List<String> chain = believed ? in.all("X-Forwarded-For") : List.of();
    out.accept(
        "X-Forwarded-For",
        chain.isEmpty() ? peerAddress : String.join(", ", chain) + ", " + peerAddress);
    String proto = believed ? in.first("X-Forwarded-Proto").orElse(scheme) : scheme;
    out.accept("X-Forwarded-Proto", proto.toLowerCase(Locale.ROOT));
    (believed ? in.first("X-Forwarded-Host").or(() -> in.first("Host")) : in.first("Host"))
        .ifPresent(host -> out.accept("X-Forwarded-Host", host));
  }

  @Override
  public String toString() {
    return trusted.isEmpty() ? "none" : trusted.toString();
  }
}
