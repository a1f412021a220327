import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app.tsx';
import { applyTheme, storedTheme } from './theme.ts';
import './styles.css';

applyTheme(storedTheme());

// A file dropped anywhere but on a drop zone would otherwise be opened by the browser in place of the
// app, leaving the page (and any uploads under way). Drop zones handle their own events first.
for (const type of ['dragover', 'drop'] as const) {
  window.addEventListener(type, (event) => {
    if (event.dataTransfer?.types.includes('Files')) event.preventDefault();
  });
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
