// Tests for this layer are added with its implementation.
import Testing
