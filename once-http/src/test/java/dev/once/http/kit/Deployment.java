package dev.once.http.kit;

import java.net.URI;

/** One adapter serving the {@link ReferenceApi} on {@link KitRoutes}, over a socket. */
public interface Deployment extends AutoCloseable {

  /** Where the application's root is, e.g. {@code http://127.0.0.1:41234}. */
  URI base();

  /** The application it hosts, whose counts the kit asserts. */
  ReferenceApi api();
}
