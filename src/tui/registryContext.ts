// The screen registry the app renders with: the real one, or one with more screens in tests.
import { createContext, useContext } from "react";
import { REGISTRY, type ScreenRegistry } from "./ui/screens/registry.ts";

export const RegistryContext = createContext<ScreenRegistry>(REGISTRY);

export const useRegistry = (): ScreenRegistry => useContext(RegistryContext);
